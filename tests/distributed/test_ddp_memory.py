"""Memory accounting under DDP: its communication buckets are their own category."""

MEMORY = """
    import retrograd
    from ddp_prelude import DDP, done, make, mine, nn, torch
    from retrograd.memory import viz

    torch.manual_seed(7)
    X, Y = torch.randn(3, 8, 5), torch.randn(3, 8, 3)
    ddp = DDP(make(hidden=64), bucket_cap_mb=0.0004)

    def buckets():
        return sum(b.flat.nbytes for b in ddp.reducer.buckets)

    def booked():
        return retrograd.memory.memory_stats()["allocated_bytes.comm_bucket.current"]

    # accounting starts after DDP made its buckets: they are found alive
    retrograd.memory._record_memory_history()
    assert len(ddp.reducer.buckets) > 2 and booked() == buckets() > 0, (booked(), buckets())
    first = {id(b.flat) for b in ddp.reducer.buckets}
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for x, y in zip(X, Y):  # the second forward rebuilds the buckets: new ones, booked
        opt.zero_grad()
        nn.functional.mse_loss(ddp(x[mine]), y[mine]).backward()
        opt.step()
        assert booked() == buckets()
    assert ddp.reducer.rebuilt and not first & {id(b.flat) for b in ddp.reducer.buckets}

    snap = retrograd.memory._snapshot()
    trace = snap["device_traces"][0]
    made = [e["size"] for e in trace if e["action"] == "alloc" and e["category"] == "comm_bucket"]
    assert sorted(made) == sorted(b.flat.nbytes for b in ddp.reducer.buckets), made
    freed = [e for e in trace if e["action"] == "free_completed"
             and e["category"] == "comm_bucket"]
    assert len(freed) == len(first)  # the first buckets, replaced
    assert sum(s["total_size"] for s in snap["segments"]
               if s["category"] == "comm_bucket") == buckets()
    tl = viz.timeline(snap, device=0)
    assert tl["bytes"][tl["categories"].index("comm_bucket"), -1] == buckets()
    assert "comm_bucket" in retrograd.memory.memory_summary()
    done()
"""


def test_ddp_buckets_are_their_own_memory_category(mpirun):
    mpirun(MEMORY, n=2)
