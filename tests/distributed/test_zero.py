"""ZeroRedundancyOptimizer: each rank keeps its share of the state, the parameters stay
those of the wrapped optimizer over every parameter (float64, rtol 1e-6)."""

ZERO = """
    from ddp_prelude import DDP, close, dist, done, make, mine, n, nn, r, torch
    from retrograd.distributed.optim import ZeroRedundancyOptimizer

    torch.manual_seed(7)
    X, Y = torch.randn(6, 8, 5), torch.randn(6, 8, 3)
    ref = make()
    ref_opt = torch.optim.Adam(ref.parameters(), lr=0.01)
    ref_sched = torch.optim.lr_scheduler.StepLR(ref_opt, step_size=2, gamma=0.5)
    ddp = DDP(make())
    opt = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=torch.optim.Adam, lr=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

    def train(model, optimizer, scheduler, x, y):
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        scheduler.step()

    for x, y in zip(X[:3], Y[:3]):
        train(ref, ref_opt, ref_sched, x, y)
        train(ddp, opt, sched, x[mine], y[mine])
        for a, b in zip(ref.parameters(), ddp.parameters()):
            close(a, b)
    owned = len(opt.optim.state)
    everyone = [None] * n
    dist.all_gather_object(everyone, owned)
    assert sum(everyone) == 4 and 0 < owned < 4, everyone  # the state is sharded

    try:
        opt.state_dict()
    except RuntimeError as e:
        assert "consolidate_state_dict" in str(e)
    opt.consolidate_state_dict(to=0)
    whole = [opt.state_dict() if r == 0 else None]
    dist.broadcast_object_list(whole, src=0)
    expected = ref_opt.state_dict()
    assert whole[0]["param_groups"][0]["lr"] == expected["param_groups"][0]["lr"]
    assert sorted(whole[0]["state"]) == sorted(expected["state"]) == [0, 1, 2, 3]
    for i, s in expected["state"].items():
        for k in ("exp_avg", "exp_avg_sq"):
            close(whole[0]["state"][i][k], s[k])

    # a fresh optimizer resumes from the whole state dict
    opt2 = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=torch.optim.Adam, lr=0.01)
    opt2.load_state_dict(whole[0])
    sched2 = torch.optim.lr_scheduler.StepLR(opt2, step_size=2, gamma=0.5)
    sched2.load_state_dict(sched.state_dict())
    assert len(opt2.optim.state) == owned
    for x, y in zip(X[3:], Y[3:]):
        train(ref, ref_opt, ref_sched, x, y)
        train(ddp, opt2, sched2, x[mine], y[mine])
        for a, b in zip(ref.parameters(), ddp.parameters()):
            close(a, b)
    done()
"""


def test_zero_redundancy_optimizer(mpirun):
    mpirun(ZERO, n=2)

OVERLAP = """
    from ddp_prelude import DDP, close, dist, done, make, mine, n, nn, raises, torch
    from retrograd.distributed.algorithms.ddp_comm_hooks.ddp_zero_hook import (
        hook_with_zero_step, hook_with_zero_step_interleaved)
    from retrograd.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
    from retrograd.distributed.optim import ZeroRedundancyOptimizer

    torch.manual_seed(7)
    X, Y = torch.randn(5, 8, 5), torch.randn(5, 8, 3)
    # the hook, shard_buckets, DDP's bucket size: two buckets, one per rank; or one bucket
    # cut in two slices
    for hook, shard, cap in [(hook_with_zero_step, False, 0.0005),
                             (hook_with_zero_step_interleaved, False, 0.0005),
                             (hook_with_zero_step, True, None)]:
        ref = make()
        ref_opt = torch.optim.Adam(ref.parameters(), lr=0.01)
        ddp = DDP(make(), bucket_cap_mb=cap)
        zero = ZeroRedundancyOptimizer(ddp.parameters(), torch.optim.Adam,
                                       overlap_with_ddp=True, lr=0.01)
        ddp.register_comm_hook(None, hook(allreduce_hook, ddp, zero, shard_buckets=shard))
        raises("fully initialized", lambda: zero.consolidate_state_dict())
        for t, (x, y) in enumerate(zip(X, Y)):
            ref_opt.zero_grad()
            nn.functional.mse_loss(ref(x), y).backward()
            if t >= 2:  # the first two iterations set the hook up (PyTorch's)
                ref_opt.step()
            zero.zero_grad()
            nn.functional.mse_loss(ddp(x[mine]), y[mine]).backward()  # steps inside
            for a, b in zip(ref.parameters(), ddp.parameters()):
                close(b, a)
        assert len(ddp.reducer.buckets) == (1 if shard else 2)
        assert [len(a) for a in zero._overlap_info.assigned_ranks_per_bucket] == \
            ([2] if shard else [1, 1])
        assert zero.step() is None  # (it only warns)
        owned = len(zero.optim.param_groups[0]["params"])
        everyone = [None] * n
        dist.all_gather_object(everyone, owned)
        assert sum(everyone) == 4 and all(everyone), everyone  # every rank owns a share

    plain = ZeroRedundancyOptimizer(ddp.parameters(), torch.optim.Adam, lr=0.01)
    raises("overlap_with_ddp=True", lambda: hook_with_zero_step(allreduce_hook, ddp, plain),
           ValueError)
    done()
"""


def test_zero_overlapped_with_ddp(mpirun):
    """ZeRO's step inside DDP's backward (PyTorch's ddp_zero_hook), after the whole
    backward and bucket by bucket: one process's Adam from the third iteration on."""
    mpirun(OVERLAP, n=2)
