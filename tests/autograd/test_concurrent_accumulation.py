"""Backward passes in several threads into one leaf accumulate exactly (PyTorch's promise).

NumPy's in-place add releases the GIL, so without AccumulateGrad's lock two threads
read the same ``.grad`` and one update is lost; two threads that find ``.grad`` None
both store a first gradient and one is lost. The sizes are the smallest at which the
unlocked code lost updates in nearly every run (200,000 elements: 13 to 18 runs in 20;
50,000 for the first-gradient race: half the runs).
"""

import sys
import threading

import numpy
import pytest

import retrograd

THREADS = 4


@pytest.fixture
def fast_switching():
    """Ask for a thread switch every microsecond, so races show up in few iterations."""
    prev = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(prev)


def _in_threads(work):
    """Run ``work(i)`` in THREADS threads released together; re-raise their errors."""
    start, errors = threading.Barrier(THREADS), []

    def run(i):
        start.wait()
        try:
            work(i)
        except BaseException as e:  # noqa: BLE001 - handed to the test's thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def _leaf_f_order(rows, cols):
    """A zero leaf laid out column-major, whose ``.grad`` must keep that layout."""
    return retrograd.zeros(cols, rows).t().requires_grad_()


def test_concurrent_backwards_lose_no_update(fast_switching):
    """4 threads x 40 backwards, 20 runs: no element of ``.grad`` misses an update.
    Even threads seed a broadcast gradient (copied into a new ``.grad``), odd ones a
    fresh product (stolen as the new ``.grad``), so both first-gradient paths race with
    the in-place adds; the layout stays the leaf's."""
    iters = 40
    for run in range(20):
        w = _leaf_f_order(400, 500)

        def work(i, w=w):
            for _ in range(iters):
                (w.sum() if i % 2 == 0 else (w * 2.0).sum()).backward()

        _in_threads(work)
        g = w.grad.numpy()
        lost = numpy.count_nonzero(g != iters * (1 + 2) * THREADS // 2)
        assert lost == 0, f"run {run}: {lost} elements lost updates"
        assert g.strides == w.detach().numpy().strides


def test_first_gradients_in_threads_are_all_kept(fast_switching):
    """Each thread's only backward finds ``.grad`` None: none may overwrite another's."""
    for run in range(100):
        w = retrograd.zeros(50_000, requires_grad=True)
        _in_threads(lambda i, w=w: w.sum().backward())
        lost = numpy.count_nonzero(w.grad.numpy() != THREADS)
        assert lost == 0, f"run {run}: {lost} elements lost updates"


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph")
def test_create_graph_accumulation_in_threads(fast_switching):
    """Under create_graph ``.grad`` is replaced by ``.grad + g``: also one at a time."""
    for run in range(10):
        w = retrograd.zeros(50_000, requires_grad=True)

        def work(i, w=w):
            for _ in range(10):
                w.sum().backward(create_graph=True)

        _in_threads(work)
        lost = numpy.count_nonzero(w.grad.detach().numpy() != 10 * THREADS)
        assert lost == 0, f"run {run}: {lost} elements lost updates"


def test_threads_recording_on_one_leaf_share_its_accumulator(fast_switching):
    """Graphs recorded at once in several threads reach one AccumulateGrad (one lock)."""
    for _ in range(200):
        w = retrograd.zeros(3, requires_grad=True)
        nodes = [None] * THREADS

        def work(i, w=w, nodes=nodes):
            nodes[i] = (w * 1.0).grad_fn.next_functions[0][0]

        _in_threads(work)
        assert all(n is nodes[0] for n in nodes)


@pytest.mark.torch
def test_post_accumulate_hooks_run_inside_the_node(both):
    """Calling the AccumulateGrad node runs the post-accumulate hooks, also for a None
    gradient; in backward a missing gradient still reaches them."""
    def scenario(T):
        log = []
        w = T.zeros(2, requires_grad=True)
        w.register_post_accumulate_grad_hook(
            lambda p: log.append(None if p.grad is None else p.grad.tolist()))
        acc = (w * 1.0).grad_fn.next_functions[0][0]
        log.append(acc(T.ones(2)))
        log.append(acc(None))

        class NoGradForX(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x + y

            @staticmethod
            def backward(ctx, g):
                return None, g

        v = T.zeros(2, requires_grad=True)
        w.grad = None
        NoGradForX.apply(w, v).sum().backward()
        return log, w.grad, v.grad.tolist()
    both(scenario)
