"""The boilerplate at the top of most PyTorch training scripts, on a machine without a
GPU: each line behaves as it does with PyTorch's CPU-only build."""

import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.testing import assert_close, make_tensor
from torch.utils import benchmark

# Device selection, as tutorials write it.
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
if torch.backends.mps.is_available():
    device = torch.device("mps")
assert device == torch.device("cpu")
assert torch.cuda.device_count() == 0 and not torch.cuda.is_initialized()
assert torch.accelerator.is_available() is False
assert torch.accelerator.current_accelerator() is None
assert torch.get_default_device() == torch.device("cpu")

# Reproducibility and speed switches.
torch.manual_seed(0)
torch.cuda.manual_seed(0)
torch.cuda.manual_seed_all(0)
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.deterministic = True
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
assert torch.backends.cudnn.benchmark and torch.backends.cudnn.deterministic
assert torch.get_float32_matmul_precision() == "high"
torch.set_float32_matmul_precision("highest")
assert torch.backends.cuda.matmul.allow_tf32 is False

# CUDA calls that need a GPU fail the way PyTorch's CPU-only build fails.
for needs_gpu in (torch.cuda.synchronize, torch.cuda.current_device,
                  lambda: torch.ones(2).cuda(), lambda: torch.zeros(2, device="cuda")):
    try:
        needs_gpu()
    except AssertionError as e:
        assert str(e) == "Torch not compiled with CUDA enabled"
    else:
        raise AssertionError("expected CUDA to be unavailable")
torch.cuda.empty_cache()

# A model moved "to the device", compiled, trained a step, timed.
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).to(device)
assert model.cpu() is model
try:
    model.cuda()
except AssertionError:
    pass
compiled = torch.compile(model)
x = torch.randn(16, 4, device=device)
with torch.no_grad():
    assert_close(compiled(x), model(x))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss = F.cross_entropy(compiled(x), torch.randint(0, 2, (16,)))
loss.backward()
opt.step()


@torch.compile(mode="reduce-overhead")
def scaled(t):
    return t * 2


assert_close(scaled(torch.ones(3)), torch.full((3,), 2.0))
assert torch.compiler.is_compiling() is False

# Half precision and dtype moves of a module.
half = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)).half()
assert half[0].weight.dtype == torch.float16
assert half[1].num_batches_tracked.dtype == torch.int64
assert half.float()[0].weight.dtype == torch.float32
half.type(torch.DoubleTensor)
assert half[1].num_batches_tracked.dtype == torch.float64
half.to_empty(device="cpu")
assert half[0].weight.shape == (2, 2)

# Legacy typed constructors.
assert torch.FloatTensor(2, 3).shape == (2, 3)
assert torch.LongTensor([1, 2]).dtype == torch.int64
assert isinstance(torch.ones(2), torch.FloatTensor)
assert not isinstance(torch.ones(2, dtype=torch.float64), torch.FloatTensor)
assert torch.ones(2).type() == "torch.FloatTensor"

# Deterministic mode and inference tensors.
torch.use_deterministic_algorithms(True)
assert torch.are_deterministic_algorithms_enabled()
assert torch.isnan(torch.empty(3)).all()
torch.use_deterministic_algorithms(False)
with torch.inference_mode():
    frozen = model(x)
assert frozen.is_inference() and not x.is_inference()
assert x[0]._is_view() and not x._is_view()

# torch.testing, as unit tests use it.
a = make_tensor((3, 4), dtype=torch.float32, device="cpu", low=-1, high=1)
assert a.shape == (3, 4) and bool((a >= -1).all()) and bool((a < 1).all())
assert_close(a, a.clone())
try:
    assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.5]))
except AssertionError as e:
    assert str(e).startswith("Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)")
else:
    raise AssertionError("expected a mismatch")

# torch.utils.benchmark, as the benchmark recipe uses it.
results = []
for n in (8, 64):
    t = torch.ones(n)
    for stmt in ("t * 2", "t + t"):
        timer = benchmark.Timer(stmt=stmt, globals={"t": t}, label="ops", sub_label=f"[{n}]",
                                description=stmt)
        results.append(timer.timeit(100))
m = results[0]
assert m.number_per_run == 100 and m.median > 0 and len(m.times) == 1
assert "1 measurement, 100 runs , 1 thread" in repr(m)
table = str(benchmark.Compare(results))
assert table.splitlines()[0].startswith("[") and " ops " in table.splitlines()[0]
assert "Times are in" in table
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    print(table)
