"""DistributedDataParallel over 2 and 4 ranks gives what one process gives on the whole
batch (float64, rtol 1e-6), with parameters identical on every rank after every step."""

import pytest

import retrograd
from retrograd.nn.parallel.distributed import _bucket_indices

EQUIVALENCE = """
    from ddp_prelude import DDP, close, done, mine, nn, r, same_everywhere, torch

    def make(seed):
        torch.manual_seed(seed)
        return nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                             nn.Linear(16, 3))

    torch.manual_seed(1234)
    X, Y = torch.randn(4, 8, 5), torch.randn(4, 8, 3)  # 4 steps of a batch of 8

    def flat(model):
        return torch.cat([p.detach().reshape(-1) for p in model.parameters()])

    for opt_name, cap, micro in [("SGD", None, 1), ("Adam", None, 1), ("SGD", 0.0005, 2),
                                 ("Adam", 0.0005, 2)]:
        make_opt = {"SGD": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
                    "Adam": lambda ps: torch.optim.Adam(ps, lr=0.01)}[opt_name]
        ref = make(0)  # one process, whole batch
        ddp = DDP(make(0 if r == 0 else 100 + r), bucket_cap_mb=cap)  # rank 0 wins
        assert torch.equal(flat(ddp.module), flat(ref))
        if cap is not None:
            assert len(ddp.reducer.buckets) > 2
        ref_opt, opt = make_opt(ref.parameters()), make_opt(ddp.parameters())
        for x, y in zip(X, Y):
            ref_opt.zero_grad()
            for part in range(micro):  # gradient accumulation over micro-batches
                rows = slice(part * 8 // micro, (part + 1) * 8 // micro)
                nn.functional.mse_loss(ref(x[rows]), y[rows]).backward()
            opt.zero_grad()
            xs, ys = x[mine], y[mine]
            for part in range(micro):
                rows = slice(part * len(xs) // micro, (part + 1) * len(xs) // micro)
                if part < micro - 1:
                    with ddp.no_sync():
                        nn.functional.mse_loss(ddp(xs[rows]), ys[rows]).backward()
                else:
                    nn.functional.mse_loss(ddp(xs[rows]), ys[rows]).backward()
            ref_opt.step()
            opt.step()
            same_everywhere(flat(ddp.module))
            close(flat(ddp.module), flat(ref))
    assert list(ddp.state_dict())[:2] == ["module.0.weight", "module.0.bias"]
    done()
"""


def test_ddp_equals_one_process_on_2_ranks(mpirun):
    mpirun(EQUIVALENCE, n=2)


def test_ddp_equals_one_process_on_4_ranks_oversubscribed(mpirun):
    mpirun(EQUIVALENCE, n=4, timeout=120)


@pytest.mark.torch
def test_buckets_as_pytorch(torch):
    sizes = [(10, "float32"), (300000, "float64"), (5, "float32"), (200000, "float32"),
             (70000, "float64"), (1, "float32"), (400000, "float32"), (3, "float64")]
    for limits in ([1 << 20, 25 << 20], [1 << 20, 2 << 20], [4000], [1]):
        ours = _bucket_indices([retrograd.zeros(k, dtype=getattr(retrograd, d))
                                for k, d in sizes], limits)
        theirs, _ = torch.distributed._compute_bucket_assignment_by_size(
            [torch.zeros(k, dtype=getattr(torch, d)) for k, d in sizes], limits,
            [False] * len(sizes))
        assert ours == theirs, limits

FEATURES = """
    from ddp_prelude import DDP, dist, done, n, nn, r, raises, torch

    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.never = nn.Linear(3, 2), nn.Linear(3, 2), nn.Linear(3, 2)
            self.register_buffer("seen", torch.tensor([float(r)]))

        def forward(self, x, use_b):
            self.seen += 1
            return self.a(x) + (self.b(x) if use_b else 0)

    # buffers: rank 0's at construction and before every forward
    torch.manual_seed(0)
    model = DDP(Branchy(), find_unused_parameters=True, bucket_cap_mb=0.00001)
    assert model.module.seen.item() == 0.0
    model.module.seen.fill_(10.0 * r)
    x = torch.full((1, 3), float(r + 1))
    out = model(x, use_b=(r == 0))  # b is used on rank 0 only, `never` nowhere
    assert model.module.seen.item() == 1.0
    out.sum().backward()
    assert model.module.never.weight.grad is None  # unused everywhere: untouched
    assert torch.allclose(model.module.a.weight.grad, torch.full((2, 3), (n + 1) / 2))
    assert torch.allclose(model.module.b.weight.grad, torch.full((2, 3), 1.0 / n))

    # the first bucket's all-reduce starts while backward still runs (overlap)
    seen_started = []
    net = DDP(nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 4)),
              bucket_cap_mb=0.00001)
    first = net.module[0].weight  # its gradient comes last
    first.register_hook(lambda g: seen_started.append(net.reducer.buckets[0].future is not None))
    net(torch.ones(2, 4)).sum().backward()
    assert seen_started == [True], seen_started

    # a parameter without gradient and no find_unused_parameters: PyTorch's error
    plain = DDP(Branchy())
    raises("Parameters which did not receive grad for rank",
           lambda: plain(x, True).sum().backward())

    # a forward under no_sync does not synchronize its backward
    net.zero_grad()
    with net.no_sync():
        net(torch.full((1, 4), float(r))).sum().backward()
    local = net.module[0].weight.grad.clone()  # depends on this rank's input
    everyone = [torch.zeros_like(local) for _ in range(n)]
    dist.all_gather(everyone, local)
    assert not torch.equal(everyone[0], everyone[1])
    raises("DistributedDataParallel is not needed", lambda: DDP(nn.ReLU()))

    # buckets rebuilt after the first backward, in the order gradients arrived
    class Backwards(nn.Module):  # registered in the reverse of the order it runs
        def __init__(self):
            super().__init__()
            self.last, self.first = nn.Linear(600, 600), nn.Linear(600, 600)

        def forward(self, x):
            return self.last(self.first(x))

    ddp = DDP(Backwards(), bucket_cap_mb=1)
    # the reverse registration order guesses `first` produces its gradients first: wrong
    assert ddp.reducer.buckets[0].params[0] is ddp.module.first.bias
    for _ in range(2):
        ddp(torch.ones(2, 600)).sum().backward()
    first_ready = ddp.reducer.buckets[0].params[0]
    assert any(first_ready is p for p in ddp.module.last.parameters())
    done()
"""


def test_ddp_buffers_unused_parameters_overlap_errors_rebuilt_buckets(mpirun):
    mpirun(FEATURES, n=2)

IN_BACKWARD = """
    from ddp_prelude import DDP, close, done, make, mine, n, nn, r, torch
    from retrograd.distributed.optim import _apply_optimizer_in_backward

    torch.manual_seed(7)
    X, Y = torch.randn(3, 8, 5), torch.randn(3, 8, 3)
    for cls, kwargs in [(torch.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
                        (torch.optim.Adam, {"lr": 0.01})]:
        ref = make()
        ref_opt = cls(ref.parameters(), **kwargs)
        net = make()
        _apply_optimizer_in_backward(cls, net.parameters(), kwargs)
        ddp = DDP(net, bucket_cap_mb=0.0005)
        for x, y in zip(X, Y):
            ref_opt.zero_grad()
            nn.functional.mse_loss(ref(x), y).backward()
            ref_opt.step()
            nn.functional.mse_loss(ddp(x[mine]), y[mine]).backward()  # steps in backward
            assert all(p.grad is None for p in net.parameters())
            for a, b in zip(ref.parameters(), net.parameters()):
                close(b, a)

    # optim.fuse_into_backward: accumulation, a scheduler, global-norm clipping
    for cls, kwargs, micro, clip in [(torch.optim.SGD, {"lr": 0.1, "momentum": 0.9}, 1, None),
                                     (torch.optim.Adam, {"lr": 0.01}, 2, None),
                                     (torch.optim.AdamW, {"lr": 0.01}, 2, 0.05)]:
        ref = make()
        ref_opt = cls(ref.parameters(), **kwargs)
        ref_sched = torch.optim.lr_scheduler.StepLR(ref_opt, step_size=1, gamma=0.5)
        ddp = DDP(make(), bucket_cap_mb=0.0005)
        opt = cls(ddp.parameters(), **kwargs)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        handle = torch.optim.fuse_into_backward(opt, accumulate_steps=micro,
                                                clip_grad_norm=clip)
        for x, y in zip(X, Y):
            ref_opt.zero_grad()
            for part in range(micro):
                rows = slice(part * 8 // micro, (part + 1) * 8 // micro)
                (nn.functional.mse_loss(ref(x[rows]), y[rows]) / micro).backward()
            if clip is not None:
                nn.utils.clip_grad_norm_(ref.parameters(), clip)
            ref_opt.step()
            ref_sched.step()
            for part in range(micro):  # this rank's half of each micro-batch
                size = 8 // micro // n
                rows = slice(part * 8 // micro + r * size, part * 8 // micro + (r + 1) * size)
                handle.backward(nn.functional.mse_loss(ddp(x[rows]), y[rows]) / micro)
            sched.step()
            assert all(p.grad is None for p in ddp.parameters())
            for a, b in zip(ref.parameters(), ddp.parameters()):
                close(b, a)
        handle.remove()
    done()
"""


def test_ddp_with_optimizers_in_backward(mpirun):
    """_apply_optimizer_in_backward and fuse_into_backward (accumulation, a scheduler and
    global-norm clipping) step on the average gradient, as one process's usual loop."""
    mpirun(IN_BACKWARD, n=2)

