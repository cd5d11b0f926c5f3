"""Collectives and DDP on bfloat16 tensors, on 2 and 4 ranks: each equal to the same
computation done in one process (MPI has no bfloat16: values travel as bit patterns and
reductions run in float32, rounded once)."""

import pytest

BFLOAT16 = """
    import numpy
    import retrograd
    from ddp_prelude import dist, done, n, r, same_everywhere

    bf = retrograd.bfloat16
    retrograd.manual_seed(0)
    data = retrograd.randn(n, 5, 7).to(bf)  # every rank's contribution, known to all

    def equal(t, expected):
        assert t.dtype == bf, (r, t.dtype)
        assert retrograd.equal(t, expected), (r, t, expected)

    # reductions: as the one process's reduction over the ranks' axis
    for op, expected in [(dist.ReduceOp.SUM, data.sum(0)), (dist.ReduceOp.AVG, data.mean(0)),
                         (dist.ReduceOp.MAX, data.amax(0)), (dist.ReduceOp.MIN, data.amin(0))]:
        t = data[r].clone()
        dist.all_reduce(t, op=op)
        equal(t, expected)
    t = retrograd.tensor([r + 1.0, 0.5, -1.5], dtype=bf)  # products exact in float32
    dist.all_reduce(t, op=dist.ReduceOp.PRODUCT)
    equal(t, retrograd.tensor([[k + 1.0, 0.5, -1.5] for k in range(n)], dtype=bf).prod(0))
    t = retrograd.full((3,), 1 + 2 ** -7, dtype=bf)  # n + n/128: rounded once
    dist.all_reduce(t)
    equal(t, retrograd.full((n, 3), 1 + 2 ** -7, dtype=bf).sum(0))
    base = retrograd.zeros(7, 5, dtype=bf)
    view = base.t()  # non-contiguous: reduced in float32, rounded back through the view
    view.copy_(data[r])
    dist.all_reduce(view)
    equal(base.t(), data.sum(0))
    t = data[r].clone()
    dist.reduce(t, dst=n - 1)
    equal(t, data.sum(0) if r == n - 1 else data[r])
    w = dist.all_reduce(data[r].clone(), async_op=True)
    w.wait()
    equal(w.result()[0], data.sum(0))
    parts = retrograd.randn(n, n, 3).to(bf)  # rank k's inputs parts[k]
    out = retrograd.zeros(3, dtype=bf)
    dist.reduce_scatter(out, list(parts[r]))
    equal(out, parts[:, r].sum(0))
    out = retrograd.zeros(3, dtype=bf)
    dist.reduce_scatter_tensor(out, parts[r].reshape(-1))
    equal(out, parts[:, r].sum(0))

    # data movement: bit for bit
    t = data[r].clone()
    dist.broadcast(t, src=n - 1)
    equal(t, data[n - 1])
    gathered = [retrograd.zeros(5, 7, dtype=bf) for _ in range(n)]
    dist.all_gather(gathered, data[r])
    equal(retrograd.stack(gathered), data)
    o = retrograd.zeros(n, 5, 7, dtype=bf)
    dist.all_gather_into_tensor(o, data[r])
    equal(o, data)
    got = [retrograd.zeros(5, 7, dtype=bf) for _ in range(n)] if r == 0 else None
    dist.gather(data[r], got, dst=0)
    if r == 0:
        equal(retrograd.stack(got), data)
    t = retrograd.zeros(5, 7, dtype=bf)
    dist.scatter(t, list(data) if r == 0 else None, src=0)
    equal(t, data[r])
    outs = [retrograd.zeros(3, dtype=bf) for _ in range(n)]
    dist.all_to_all(outs, list(parts[r]))
    equal(retrograd.stack(outs), parts[:, r])
    if n > 1:
        t = data[r].clone() if r == 0 else retrograd.zeros(5, 7, dtype=bf)
        if r == 0:
            dist.send(t, dst=1)
        elif r == 1:
            dist.recv(t, src=0)
            equal(t, data[0])

    # DDP on a bfloat16 model: every rank's gradients, divided by n in bfloat16 (PyTorch's
    # reducer divides before the sum), summed in float32 and rounded: computed here from
    # every rank's batch rows, the reduction of one process
    from ddp_prelude import DDP, make, mine, nn
    x, y = retrograd.randn(8, 5).to(bf), retrograd.randn(8, 3).to(bf)

    def shard_grads(model, k, x=x, y=y):
        model.zero_grad()
        rows = slice(k * 8 // n, (k + 1) * 8 // n)
        nn.functional.mse_loss(model(x[rows]), y[rows]).backward()
        return [p.grad.clone() for p in model.parameters()]

    ddp = DDP(make(0 if r == 0 else 7 + r).to(bf), bucket_cap_mb=0.0001)
    local = make(0).to(bf)
    assert len(ddp.reducer.buckets) > 1
    opt = retrograd.optim.SGD(ddp.parameters(), lr=0.1)
    local_opt = retrograd.optim.SGD(local.parameters(), lr=0.1)
    for step in range(3):
        shards = [shard_grads(local, k) for k in range(n)]
        expected = [sum((s[i] / n).float() for s in shards).to(bf)
                    for i in range(len(shards[0]))]
        opt.zero_grad()
        nn.functional.mse_loss(ddp(x[mine]), y[mine]).backward()
        for p, e in zip(ddp.parameters(), expected, strict=True):
            equal(p.grad, e)
        for p, e in zip(local.parameters(), expected, strict=True):
            p.grad = e
        opt.step()
        local_opt.step()
        for p, q in zip(ddp.parameters(), local.parameters(), strict=True):
            same_everywhere(p.detach())
            equal(p.detach(), q.detach())

    # bf16_compress_hook on a float32 model: each rank's gradient rounded to bfloat16 and
    # divided by n there, the sum rounded to bfloat16 once, then widened to float32
    from retrograd.distributed.algorithms.ddp_comm_hooks import default_hooks
    hooked, local = DDP(make(0).float(), bucket_cap_mb=0.0001), make(0).float()
    hooked.register_comm_hook(None, default_hooks.bf16_compress_hook)
    xf, yf = x.float(), y.float()
    shards = [shard_grads(local, k, xf, yf) for k in range(n)]
    nn.functional.mse_loss(hooked(xf[mine]), yf[mine]).backward()
    for i, p in enumerate(hooked.parameters()):
        e = sum((s[i].to(bf) / n).float() for s in shards).to(bf).float()
        assert p.grad.dtype == retrograd.float32 and retrograd.equal(p.grad, e), (r, i)
    done()
"""


@pytest.mark.parametrize("n", [2, 4])
def test_bfloat16_collectives_and_ddp_equal_one_process(mpirun, n):
    mpirun(BFLOAT16, n=n, timeout=120)
