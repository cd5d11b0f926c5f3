"""no_grad, enable_grad, set_grad_enabled, inference_mode: context managers, decorators,
nesting, generators and threads, against PyTorch."""

import threading

import pytest

pytestmark = pytest.mark.torch


def _records(T, x):
    return T.is_grad_enabled(), (x * 2).requires_grad


def test_context_managers_nest(both):
    def scenario(T):
        x = T.tensor([1.], requires_grad=True)
        log = [_records(T, x)]
        with T.no_grad() as ctx:
            log += [ctx, _records(T, x)]
            with T.enable_grad() as ctx2:
                log += [ctx2, _records(T, x)]
                with T.no_grad():
                    log.append(_records(T, x))
                log.append(_records(T, x))
            log.append(_records(T, x))
            with T.set_grad_enabled(True):
                log.append(_records(T, x))
            log.append(_records(T, x))
        log.append(_records(T, x))
        try:
            with T.no_grad():
                raise ValueError
        except ValueError:
            log.append(T.is_grad_enabled())
        return log
    both(scenario)


def test_decorators_with_and_without_call(both):
    def scenario(T):
        x = T.tensor([1.], requires_grad=True)

        @T.no_grad
        def bare():
            return _records(T, x)

        @T.no_grad()
        def called():
            return _records(T, x)

        @T.enable_grad
        def bare_enable():
            return _records(T, x)

        @T.enable_grad()
        def called_enable():
            return _records(T, x)

        @T.set_grad_enabled(False)
        def off():
            return _records(T, x)

        after_decorating = T.is_grad_enabled()
        log = [bare(), called(), off(), after_decorating, T.is_grad_enabled(),
               bare.__name__, called.__name__, off.__name__]
        with T.no_grad():
            log += [bare_enable(), called_enable(), T.is_grad_enabled()]
        return log
    both(scenario)


def test_set_grad_enabled_as_a_call(both):
    def scenario(T):
        x = T.tensor([1.], requires_grad=True)
        T.set_grad_enabled(False)
        log = [_records(T, x)]
        T.set_grad_enabled(True)
        log.append(_records(T, x))
        with T.set_grad_enabled(False):
            log.append(_records(T, x))
        return log + [_records(T, x)]
    both(scenario)


def test_decorated_generator_runs_each_step_in_the_mode(both):
    def scenario(T):
        @T.no_grad()
        def gen():
            received = yield T.is_grad_enabled()
            try:
                yield (received, T.is_grad_enabled())
            except KeyError:
                yield ("thrown", T.is_grad_enabled())

        g = gen()
        log = [next(g), T.is_grad_enabled(), g.send(5), T.is_grad_enabled(),
               g.throw(KeyError()), T.is_grad_enabled()]
        g.close()
        return log + [T.is_grad_enabled()]
    both(scenario)


def test_grad_mode_is_thread_local(both):
    def scenario(T):
        seen = []

        def worker():
            seen.append(T.is_grad_enabled())
            with T.no_grad():
                seen.append(T.is_grad_enabled())

        with T.no_grad():
            th = threading.Thread(target=worker)
            th.start()
            th.join()
            seen.append(T.is_grad_enabled())
        return seen + [T.is_grad_enabled()]
    both(scenario)


def test_inference_mode(both):
    def scenario(T):
        x = T.tensor([1.], requires_grad=True)
        log = []
        with T.inference_mode():
            log += [_records(T, x), T.is_inference_mode_enabled()]
            with T.inference_mode(False):
                log += [_records(T, x), T.is_inference_mode_enabled()]
        log.append(T.is_inference_mode_enabled())
        with T.no_grad():
            with T.inference_mode(False):
                log.append(_records(T, x))

        @T.inference_mode
        def bare():
            return T.is_inference_mode_enabled(), T.is_grad_enabled()

        @T.inference_mode()
        def called():
            return T.is_inference_mode_enabled()

        @T.inference_mode(False)
        def off():
            return T.is_inference_mode_enabled()

        return log + [bare(), called(), off(), bare.__name__, T.is_grad_enabled()]
    both(scenario)


def test_backward_works_inside_no_grad(both):
    def scenario(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x * x
        with T.no_grad():
            y.backward(T.ones(2))
            z = x * 3
        return [x.grad.tolist(), z.requires_grad, T.is_grad_enabled()]
    both(scenario)
