"""DDP communication hooks: PyTorch's default hooks, a custom hook seeing GradBucket, and
fused optimizer steps that wait for the hook's future."""

HOOKS = """
    import numpy
    from ddp_prelude import DDP, close, dist, done, make, mine, n, nn, raises, torch
    from retrograd.distributed.algorithms.ddp_comm_hooks import default_hooks
    from retrograd.futures import Future

    torch.manual_seed(7)
    X, Y = torch.randn(3, 8, 5), torch.randn(3, 8, 3)

    def grads(model, x, y):
        model.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        return [p.grad.clone() for p in model.parameters()]

    # allreduce_hook: exactly DDP's own reduction (three steps: buckets rebuilt on the second)
    plain, hooked = DDP(make(), bucket_cap_mb=0.0005), DDP(make(), bucket_cap_mb=0.0005)
    hooked.register_comm_hook(None, default_hooks.allreduce_hook)
    for x, y in zip(X, Y):
        for a, b in zip(grads(plain, x[mine], y[mine]), grads(hooked, x[mine], y[mine])):
            assert torch.equal(a, b)
    raises("can only be called once",
           lambda: hooked.register_comm_hook(None, default_hooks.allreduce_hook))

    # fp16_compress_hook: PyTorch's formula, each rank's float32 gradient cast to float16
    # and divided by the world size, summed in float16, cast back
    f16 = numpy.float16
    compressed = DDP(make().float(), bucket_cap_mb=0.0005)
    compressed.register_comm_hook(dist.group.WORLD, default_hooks.fp16_compress_hook)
    local = make().float()
    for x, y in zip(X.float(), Y.float()):
        got = grads(compressed, x[mine], y[mine])
        everyone = [None] * n
        dist.all_gather_object(everyone, [g.numpy() for g in grads(local, x[mine], y[mine])])
        for i, g in enumerate(got):
            expected = sum(e[i].astype(f16) / f16(n) for e in everyone).astype(numpy.float32)
            assert g.dtype == torch.float32
            numpy.testing.assert_array_equal(g.numpy(), expected)

    # a custom hook: GradBucket's view of the bucket; its future's tensor becomes .grad
    seen = []

    def doubled_local(state, bucket):
        params = bucket.parameters()
        state.append((bucket.index(), bucket.is_last()))
        for g, p in zip(bucket.gradients(), params, strict=True):
            assert g.shape == p.shape and torch.equal(g, p.grad)  # undivided, local
        assert bucket.buffer().numel() == sum(p.numel() for p in params)
        bucket.set_buffer(bucket.buffer() * 2)
        assert torch.equal(bucket.gradients()[0], 2 * params[0].grad)
        fut = Future()
        fut.set_result(bucket.buffer())
        return fut

    custom = DDP(make(), bucket_cap_mb=0.0001)
    custom.register_comm_hook(seen, doubled_local)
    for a, b in zip(grads(custom, X[0][mine], Y[0][mine]), grads(make(), X[0][mine],
                                                                 Y[0][mine])):
        assert torch.equal(a, 2 * b)
    count = len(custom.reducer.buckets)
    assert count > 2 and seen == [(i, i == count - 1) for i in range(count)], seen

    # hooks PyTorch refuses
    def annotated(state, bucket: int):
        return bucket

    raises("Communication hook must be callable", lambda: DDP(make()).register_comm_hook(
        None, 3), TypeError)
    raises("bucket annotation should be dist.GradBucket",
           lambda: DDP(make()).register_comm_hook(None, annotated), ValueError)
    no_future = DDP(make())
    no_future.register_comm_hook(None, lambda state, bucket: bucket.buffer())
    raises("must return a torch.futures.Future",
           lambda: no_future(X[0][mine]).sum().backward(), TypeError)

    # fused steps wait for the hook's future: here every future completes only when the
    # last bucket's hook runs, and nothing may have stepped before
    ref = make()
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    ddp = DDP(make(), bucket_cap_mb=0.0005)
    handle = torch.optim.fuse_into_backward(torch.optim.SGD(ddp.parameters(), lr=0.1,
                                                            momentum=0.9))
    pending, before = [], []

    def late(state, bucket):
        fut = Future()
        pending.append((fut, bucket.buffer()))
        if bucket.is_last():
            assert all(torch.equal(a, b) for a, b in zip(before, ddp.parameters()))
            for f, buf in pending:
                dist.all_reduce(buf.div_(n))
                f.set_result(buf)
            pending.clear()
        return fut

    ddp.register_comm_hook(None, late)
    for x, y in zip(X, Y):
        ref_opt.zero_grad()
        nn.functional.mse_loss(ref(x), y).backward()
        ref_opt.step()
        before[:] = [p.detach().clone() for p in ddp.parameters()]
        nn.functional.mse_loss(ddp(x[mine]), y[mine]).backward()
        for a, b in zip(ref.parameters(), ddp.parameters()):
            close(b, a)
    handle.remove()
    done()
"""


def test_comm_hooks(mpirun):
    mpirun(HOOKS, n=2)
