"""torchvision's ways of naming weights, as scripts write them: weight enums and their
names, legacy ``pretrained=``, and ``--random-weights`` (what the runner sets)."""

import warnings

import pytest

from retrograd import models
from retrograd.models import _weights

_PRETRAINED = ("The parameter 'pretrained' is deprecated since 0.13 and may be removed in "
               "the future, please use 'weights' instead.")


def test_pretrained_false_is_weights_none_with_torchvisions_warnings():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = models.resnet18(pretrained=False, num_classes=3)
    assert model.fc.out_features == 3
    assert [str(w.message) for w in caught] == [
        _PRETRAINED,
        "Arguments other than a weight enum or `None` for 'weights' are deprecated since "
        "0.13 and may be removed in the future. The current behavior is equivalent to "
        "passing `weights=None`."]
    assert all(w.category is UserWarning and w.filename == __file__ for w in caught)


def test_pretrained_true_asks_for_imagenet_weights():
    with pytest.warns(UserWarning) as caught, \
            pytest.raises(ValueError, match=r"weights=ResNet18_Weights.IMAGENET1K_V1 is not"):
        models.resnet18(pretrained=True)
    assert str(caught[1].message).endswith(
        "equivalent to passing `weights=ResNet18_Weights.IMAGENET1K_V1`. You can also use "
        "`weights=ResNet18_Weights.DEFAULT` to get the most up-to-date weights.")


def test_weights_of_another_model_are_refused():
    with pytest.raises(TypeError, match="Invalid Weight class provided; expected "
                                        "ResNet18_Weights but received ViT_B_16_Weights."):
        models.resnet18(weights=models.ViT_B_16_Weights.DEFAULT)


@pytest.mark.parametrize("weights", ["DEFAULT", "IMAGENET1K_V1", "ResNet18_Weights.DEFAULT",
                                     models.ResNet18_Weights.DEFAULT])
def test_random_weights_stand_in_for_every_name(weights, monkeypatch):
    notes = []
    monkeypatch.setattr(_weights, "_random_weights", True)
    monkeypatch.setattr(_weights, "_random_weights_note", lambda m, n: notes.append(n))
    assert isinstance(models.resnet18(weights=weights), models.ResNet)
    assert notes == [repr(weights)]


def test_random_weights_do_not_hide_a_wrong_name(monkeypatch):
    monkeypatch.setattr(_weights, "_random_weights", True)
    with pytest.raises(ValueError, match="weights='IMAGENET1K_V3' is not a local checkpoint"):
        models.resnet18(weights="IMAGENET1K_V3")
