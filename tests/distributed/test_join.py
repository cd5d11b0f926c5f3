"""Uneven inputs under ``Join``: the ranks that run out shadow the others' collectives
and contribute zero gradients; the result is PyTorch's (the sum of the active ranks'
gradients over the world size, or over the active ranks), and every rank ends with the
model of the last to finish."""

import pytest

import retrograd

JOIN = """
    from ddp_prelude import DDP, close, done, make, n, nn, r, raises, torch
    from retrograd.distributed.algorithms import Join
    from retrograd.distributed.algorithms.ddp_comm_hooks import default_hooks
    from retrograd.distributed.optim import ZeroRedundancyOptimizer

    torch.manual_seed(7)
    X, Y = torch.randn(5, 8, 5), torch.randn(5, 8, 3)
    rows = [slice(k * 8 // n, (k + 1) * 8 // n) for k in range(n)]
    # batches per rank, divide_by_initial_world_size, find_unused_parameters, comm hook
    for counts, initial, unused, hook in [((3, 5), True, False, None),
                                          ((5, 2), False, False, None),
                                          ((0, 2), True, False, None),  # no batch at all
                                          ((3, 4), False, True, None),
                                          ((2, 4), True, False, default_hooks.allreduce_hook)]:
        ref = make()  # one process: each step on the active ranks' rows
        ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
        for t in range(max(counts)):
            active = [k for k in range(n) if t < counts[k]]
            ref_opt.zero_grad()
            for k in active:
                loss = nn.functional.mse_loss(ref(X[t][rows[k]]), Y[t][rows[k]])
                (loss / (n if initial else len(active))).backward()
            ref_opt.step()

        ddp = DDP(make(), find_unused_parameters=unused, bucket_cap_mb=0.0005)
        if hook is not None:
            ddp.register_comm_hook(None, hook)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
        with ddp.join(divide_by_initial_world_size=initial):
            for t in range(counts[r]):
                opt.zero_grad()
                nn.functional.mse_loss(ddp(X[t][rows[r]]), Y[t][rows[r]]).backward()
                opt.step()
        for a, b in zip(ref.parameters(), ddp.parameters()):
            close(b, a)

    # ZeroRedundancyOptimizer joins too: the joined rank's step updates its shard with the
    # gradient it still holds (its last iteration's average), as PyTorch's join hook does
    counts = (2, 3)
    ddp = DDP(make(), bucket_cap_mb=0.0005)
    zero = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=torch.optim.Adam,
                                   lr=0.01)
    with Join([ddp, zero]):
        for t in range(counts[r]):
            zero.zero_grad()
            nn.functional.mse_loss(ddp(X[t][rows[r]]), Y[t][rows[r]]).backward()
            zero.step()
    index = {id(p): i for i, p in enumerate(ddp.parameters())}
    shard0 = {index[id(p)] for g in zero._partition[0] for p in g["params"]}
    assert 0 < len(shard0) < 4
    ref = make()
    ref_opt = torch.optim.Adam(ref.parameters(), lr=0.01)
    params = list(ref.parameters())
    for t in range(max(counts)):
        ref_opt.zero_grad()
        for k in range(n):
            if t < counts[k]:
                loss = nn.functional.mse_loss(ref(X[t][rows[k]]), Y[t][rows[k]])
                (loss / n).backward()
        if t == counts[0]:
            for i in shard0:
                params[i].grad = last[i]
        last = [p.grad.clone() for p in params]
        ref_opt.step()
    for a, b in zip(params, ddp.parameters()):
        close(b, a)

    # throw_on_early_termination: every rank raises once one ran out
    ddp = DDP(make())

    def uneven():
        with ddp.join(throw_on_early_termination=True):
            for t in range(2 + r):
                nn.functional.mse_loss(ddp(X[t][rows[r]]), Y[t][rows[r]]).backward()

    raises("Rank 0 exhausted all inputs." if r == 0 else
           "Detected at least one rank that exhausted inputs. Throwing across all ranks.",
           uneven)
    done()
"""


def test_join_uneven_inputs(mpirun):
    mpirun(JOIN, n=2)


def test_join_needs_a_joinable():
    with pytest.raises(ValueError, match="requires at least one joinable"):
        retrograd.distributed.algorithms.Join([])
