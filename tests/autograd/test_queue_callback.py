"""``Variable._execution_engine.queue_callback``: callbacks run once backward has run every
node (after the leaves' gradients are accumulated), in order, including ones queued by a
callback; outside backward it is an error. Compared with PyTorch."""

import pytest

import retrograd


def _scenario(lib):
    engine = lib.autograd.Variable._execution_engine
    x = lib.ones(2, requires_grad=True)
    log = []

    def second():
        log.append("second")

    def first():
        log.append(("first", x.grad.tolist()))
        engine.queue_callback(second)

    def hook(g):
        engine.queue_callback(first)
        log.append("hook")

    x.register_hook(hook)
    (x * 2).sum().backward()
    with pytest.raises(RuntimeError) as e:
        engine.queue_callback(first)
    return log, str(e.value)


@pytest.mark.torch
def test_queue_callback_as_pytorch(torch):
    ours = _scenario(retrograd)
    assert ours == _scenario(torch)
    assert ours[0] == ["hook", ("first", [2.0, 2.0]), "second"]
