"""save/load in PyTorch's zip format: round trips, files written by one library read by
the other, shared storages, and weights_only refusals."""

import collections
import io
import pickle
import zipfile

import numpy
import pytest

import retrograd


def _state(T):
    """A state dict with every kind of content the format must carry."""
    base = T.arange(12.).reshape(3, 4)
    return collections.OrderedDict(
        weight=base, row=base[1], col=base[:, 2], t=base.t(),
        long=T.tensor([1, -2, 3], dtype=T.int64), int=T.tensor([7], dtype=T.int32),
        byte=T.tensor([0, 255], dtype=T.uint8), flags=T.tensor([True, False]),
        half=T.tensor([1.5, -2.], dtype=T.float16),
        double=T.tensor([[1., 2.]], dtype=T.float64), scalar=T.tensor(3.5),
        empty=T.zeros(0, 3), grad=T.ones(2, requires_grad=True),
        nested={"list": [1, 2.5, "text", None, True], "tuple": (T.ones(2), 3),
                "dict": collections.OrderedDict(a=T.zeros(1))},
        number=7, name="model", dtype=T.float64, size=T.Size([2, 3]))


def _plain(obj):
    """Nested Python data with tensors as (dtype name, shape, values, requires_grad)."""
    if hasattr(obj, "detach") and hasattr(obj, "dtype"):
        return (str(obj.dtype), tuple(obj.shape), obj.detach().tolist(), obj.requires_grad)
    if isinstance(obj, dict):
        return (type(obj).__name__, [(k, _plain(v)) for k, v in obj.items()])
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [_plain(v) for v in obj])
    return obj if not hasattr(obj, "is_floating_point") else str(obj)


def test_round_trip(tmp_path):
    sd = _state(retrograd)
    retrograd.save(sd, tmp_path / "m.pt")
    back = retrograd.load(tmp_path / "m.pt")
    assert _plain(back) == _plain(sd)
    assert type(back) is collections.OrderedDict and back["dtype"] is retrograd.float64
    assert back["size"] == retrograd.Size([2, 3]) and type(back["size"]) is retrograd.Size


def test_file_layout_is_pytorchs(tmp_path):
    retrograd.save({"a": retrograd.ones(3)}, tmp_path / "model.pt")
    with zipfile.ZipFile(tmp_path / "model.pt") as zf:
        names = zf.namelist()
        assert names == ["model/data.pkl", "model/.format_version", "model/.storage_alignment",
                         "model/byteorder", "model/data/0", "model/version",
                         "model/.data/serialization_id"]
        assert zf.read("model/version") == b"3\n" and zf.read("model/byteorder") == b"little"
        info = zf.getinfo("model/data/0")
        assert info.compress_type == zipfile.ZIP_STORED
        assert numpy.frombuffer(zf.read("model/data/0"), numpy.float32).tolist() == [1.] * 3
        with open(tmp_path / "model.pt", "rb") as f:  # data aligned to 64 bytes
            f.seek(info.header_offset + 26)
            n, m = numpy.frombuffer(f.read(4), numpy.uint16)
            assert (info.header_offset + 30 + n + m) % 64 == 0
    buf = io.BytesIO()
    retrograd.save(retrograd.ones(1), buf)
    assert zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()[0] == "archive/data.pkl"


def test_views_share_storage_after_loading():
    buf = io.BytesIO()
    base = retrograd.arange(6.).reshape(2, 3)
    retrograd.save({"base": base, "row": base[1], "t": base.t(), "again": base}, buf)
    buf.seek(0)
    back = retrograd.load(buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zf:
        assert [n for n in zf.namelist() if "/data/" in n] == ["archive/data/0"]
    assert back["again"] is back["base"]
    assert back["t"].stride() == (1, 3) and back["row"].tolist() == [3., 4., 5.]
    back["row"][0] = 100.
    assert back["base"][1, 0].item() == 100. and back["t"][0, 1].item() == 100.


def test_non_contiguous_and_negative_stride_arrays_are_saved_compactly():
    src = retrograd.arange(5.)
    flipped = retrograd.Tensor(src.numpy()[::-1])  # a NumPy view with a negative stride
    buf = io.BytesIO()
    retrograd.save([flipped, src[::2]], buf)
    buf.seek(0)
    a, b = retrograd.load(buf)
    assert a.tolist() == [4., 3., 2., 1., 0.] and b.tolist() == [0., 2., 4.]


class Custom:
    pass


def test_weights_only_refuses_other_globals():
    buf = io.BytesIO()
    retrograd.save({"obj": Custom(), "fn": print}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL .*Custom was not an allowed"):
        retrograd.load(buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="weights_only"):
        retrograd.load(buf, weights_only=True)
    buf.seek(0)
    back = retrograd.load(buf, weights_only=False)
    assert isinstance(back["obj"], Custom) and back["fn"] is print
    buf = io.BytesIO()
    retrograd.save({"fn": print}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL print was not"):
        retrograd.load(buf)
    buf.seek(0)
    with retrograd.serialization.safe_globals([print]):
        assert retrograd.load(buf)["fn"] is print
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        retrograd.load(buf)


def test_malicious_pickle_is_refused_before_running():
    """A pickle calling os.system: refused by name, nothing runs."""
    payload = b"cos\nsystem\n(S'echo pwned'\ntR."
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", payload)
        zf.writestr("archive/version", "3\n")
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL os.system"):
        retrograd.load(buf)


def test_load_errors_and_map_location(tmp_path):
    with pytest.raises(FileNotFoundError):
        retrograd.load(tmp_path / "missing.pt")
    (tmp_path / "legacy.pt").write_bytes(pickle.dumps({"a": 1}, protocol=2))
    with pytest.raises(RuntimeError, match="zip format"):
        retrograd.load(tmp_path / "legacy.pt")
    retrograd.save({"a": retrograd.ones(2)}, tmp_path / "m.pt")
    for loc in ("cpu", retrograd.device("cpu"), {"cpu": "cpu"}, None,
                lambda storage, location: storage):
        assert retrograd.load(tmp_path / "m.pt", map_location=loc)["a"].tolist() == [1., 1.]
    with pytest.raises(NotImplementedError, match="on the CPU"):
        retrograd.load(tmp_path / "m.pt", map_location=lambda storage, location: 1)
    with pytest.raises(NotImplementedError):
        retrograd.load(tmp_path / "m.pt", mmap=True)


def test_parameters_round_trip(tmp_path):
    nn = pytest.importorskip("retrograd.nn")
    if not hasattr(nn, "Parameter"):
        pytest.skip("retrograd.nn.Parameter is not there yet")
    p = nn.Parameter(retrograd.ones(2))
    retrograd.save({"p": p}, tmp_path / "p.pt")
    back = retrograd.load(tmp_path / "p.pt")["p"]
    assert isinstance(back, nn.Parameter) and back.requires_grad and back.tolist() == [1., 1.]


# ---- against PyTorch --------------------------------------------------------------------

@pytest.mark.torch
def test_torch_reads_what_retrograd_writes(tmp_path):
    torch = pytest.importorskip("torch")
    retrograd.save(_state(retrograd), tmp_path / "r.pt")
    back = torch.load(tmp_path / "r.pt", weights_only=True)
    assert _plain(back) == _plain(_state(torch))
    assert back["row"].untyped_storage().data_ptr() == back["weight"].untyped_storage().data_ptr()
    assert back["t"].stride() == (1, 4) and back["col"].storage_offset() == 2


@pytest.mark.torch
def test_retrograd_reads_what_torch_writes(tmp_path):
    torch = pytest.importorskip("torch")
    sd = _state(torch)
    torch.save(sd, tmp_path / "t.pt")
    back = retrograd.load(tmp_path / "t.pt", weights_only=True)
    assert _plain(back) == _plain(_state(retrograd))
    back["row"][0] = -1.
    assert back["weight"][1, 0].item() == -1.  # one storage, as in the file


@pytest.mark.torch
def test_module_state_dicts_and_parameters_from_torch(tmp_path):
    torch = pytest.importorskip("torch")
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    torch.save(model.state_dict(), tmp_path / "sd.pt")
    torch.save({"p": torch.nn.Parameter(torch.ones(2)), "dev": torch.device("cpu"),
                "c": torch.tensor([1 + 2j]), "bf": torch.ones(2, dtype=torch.bfloat16)},
               tmp_path / "p.pt")
    sd = retrograd.load(tmp_path / "sd.pt")
    assert list(sd) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    for k, v in model.state_dict().items():
        assert sd[k].tolist() == v.tolist() and sd[k].dtype == retrograd.float32
    other = retrograd.load(tmp_path / "p.pt")
    assert other["p"].requires_grad and other["p"].tolist() == [1., 1.]
    assert other["dev"] == retrograd.device("cpu") and other["c"].tolist() == [1 + 2j]
    assert other["bf"].dtype == retrograd.bfloat16 and other["bf"].tolist() == [1., 1.]


@pytest.mark.torch
@pytest.mark.parametrize("writer", ["torch", "retrograd"])
def test_bfloat16_state_dicts_both_ways(tmp_path, writer):
    """BFloat16Storage in both directions: values bit for bit, dtype, a shared storage."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2)).bfloat16()
    sd = dict(model.state_dict())
    sd["view"] = sd["0.weight"][1:, ::2]
    bits = {k: v.view(torch.int16).tolist() for k, v in sd.items()}
    if writer == "torch":
        torch.save(sd, tmp_path / "bf.pt")
        back = retrograd.load(tmp_path / "bf.pt", weights_only=True)
        assert {k: v._data.view(numpy.int16).tolist() for k, v in back.items()} == bits
        assert all(v.dtype == retrograd.bfloat16 for v in back.values())
        back["0.weight"][1, 0] = 2.
        assert back["view"][0, 0].item() == 2.  # one storage, as in the file
    else:
        ours = {k: retrograd.from_numpy(v.view(torch.int16).numpy().view(
            retrograd.bfloat16.np)) for k, v in sd.items()}
        ours["view"] = ours["0.weight"][1:, ::2]
        retrograd.save(ours, tmp_path / "bf.pt")
        back = torch.load(tmp_path / "bf.pt", weights_only=True)
        assert {k: v.view(torch.int16).tolist() for k, v in back.items()} == bits
        assert all(v.dtype == torch.bfloat16 for v in back.values())
        assert back["view"].untyped_storage().data_ptr() == \
            back["0.weight"].untyped_storage().data_ptr()


@pytest.mark.torch
def test_torch_weights_only_refuses_what_retrograd_refuses(tmp_path):
    torch = pytest.importorskip("torch")
    buf = io.BytesIO()
    retrograd.save({"fn": print}, buf)
    for lib in (torch, retrograd):
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError, match="GLOBAL print was not an allowed "
                                                         "global by default"):
            lib.load(buf, weights_only=True)
