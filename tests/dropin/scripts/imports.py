"""A PyTorch user's imports, in every spelling, then a training step that mixes what they
gave. Under ``python -m retrograd run`` each name is retrograd's module (run by
tests/dropin/test_runner.py, as every script in this folder)."""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim.lr_scheduler
import torch.utils.data
import torchvision
from torch import nn as nn2
from torch import optim
from torch.autograd import Variable
from torch.utils.data import DataLoader, TensorDataset
from torchvision import models
from torchvision.models import ResNet18_Weights, resnet18

assert torch.__name__ == "retrograd", "the runner did not alias torch"
assert sys.modules["torch"] is torch and sys.modules["torch.nn"] is nn is nn2 is torch.nn
assert F is nn.functional and optim is torch.optim
assert torch.utils.data.DataLoader is DataLoader and Variable is torch.autograd.Variable
assert torch.optim.lr_scheduler.StepLR is optim.lr_scheduler.StepLR
assert torchvision.models is models and models.resnet18 is resnet18
assert ResNet18_Weights.DEFAULT is ResNet18_Weights.IMAGENET1K_V1

# A training step whose objects come from all of those routes.
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn2.Linear(8, 2))
data = TensorDataset(torch.randn(16, 4), torch.randint(0, 2, (16,)))
optimizer = optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
losses = []
for x, y in DataLoader(data, batch_size=8):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
    losses.append(loss.item())
assert isinstance(loss, torch.Tensor) and len(losses) == 2
assert optimizer.param_groups[0]["lr"] == 0.025

# A module that does not exist names itself; nothing falls through to another torch.
for name in ("torch.no_such_module", "torch.nn.no_such_module", "torchvision.no_such_module"):
    try:
        __import__(name)
    except ModuleNotFoundError as e:
        assert e.name == name and str(e) == f"No module named {name!r}", e
    else:
        raise AssertionError(f"{name} imported")

# Version checks as libraries write them.
from packaging.version import Version  # noqa: E402

assert Version(torch.__version__) >= Version("2.0") and Version(torch.__version__).major == 2
assert torch.__version__ >= "2.0" and torch.__version__ > "2.9" and torch.__version__ < "3"
assert torch.__version__ >= (2, 13) and torch.__version__ < (2, 14)
assert torch.__version__.split("+")[0] == "2.13.0"
assert torch.version.cuda is None and torch.cuda.is_available() is False
print("imports: ok")
