"""Op database entries for the products of ``ops/linalg.py``.

matmul samples cover every case of PyTorch's dispatch (dot, mv, mm, vector @
matrix, folded batches, bmm with broadcast batch dims, the transposed fold),
so the grad_fn names are compared case by case; einsum samples cover
contractions, diagonals, ellipsis broadcasting, implicit output and the
sublist form.
"""

import operator


from ._core import ErrorInput, OpInfo, SampleInput, make_tensor, maker as _maker


_FLOAT = ("float32", "float64")
_WITH_INT = ("float32", "float64", "int64")


_MATMUL_SHAPES = [
    ((3,), (3,), "dot"), ((2, 3), (3,), "mv"), ((3,), (3, 4), "vec_mat"),
    ((2, 3), (3, 4), "mm"), ((5, 2, 3), (3, 4), "batch_mat"), ((2, 5, 2, 3), (3,), "batch_vec"),
    ((3,), (5, 3, 4), "vec_batch"), ((2, 3), (5, 3, 4), "mat_batch"),
    ((5, 2, 3), (5, 3, 4), "bmm"), ((2, 1, 2, 3), (4, 3, 5), "broadcast_batch"),
    ((1, 2, 3), (5, 3, 4), "batch_of_one_left"), ((5, 2, 3), (1, 3, 4), "batch_of_one_right"),
    ((1, 1, 2, 3), (2, 5, 3, 4), "4d_broadcast"), ((0, 2, 3), (3, 4), "empty_batch"),
    ((2, 0), (0, 3), "empty_inner"), ((4, 1), (1, 5), "outer"), ((1, 3), (3, 4), "one_row"),
    ((2, 3), (3, 1), "mat_col"), ((3, 4, 1), (3, 1, 5), "batch_outer"),
    ((3, 1, 4), (3, 4, 5), "batch_one_row"), ((3, 2, 4), (3, 4, 1), "batch_col"),
]


def _matmul_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    for sa, sb, name in _MATMUL_SHAPES:
        yield SampleInput(t(*sa), args=(t(*sb),), name=name)
    yield SampleInput(t(2, 3, noncontiguous=True), args=(t(3, 4, noncontiguous=True),),
                      name="strided")


def _t_other_samples(dtype, requires_grad):
    """``input @ other.t()``, a linear layer's product: the weight's gradient is laid out
    as the weight (an outer product for a vector or a row)."""
    t = _maker(dtype, requires_grad)
    for sa in ((2, 3), (1, 3), (3,)):
        yield SampleInput(t(*sa), args=(t(4, 3),), name=f"{len(sa)}d_{sa[0]}")
    if dtype == "float32":  # few rows, many columns: too many elements for gradcheck
        yield SampleInput(t(2, 32), args=(t(512, 32),), name="wide")


def _matmul_errors():
    for sa, sb, name in [((3,), (4,), "dot_size"), ((2, 3), (4,), "mv_size"),
                         ((3,), (4, 5), "vec_mat_size"), ((2, 3), (4, 5), "mm_size"),
                         ((5, 2, 3), (4, 5), "batch_mat_size"),
                         ((5, 2, 3), (5, 4, 5), "bmm_size"),
                         ((5, 2, 3), (4, 3, 5), "batch_broadcast"), ((), (3,), "0d")]:
        yield ErrorInput(SampleInput(make_tensor(*sa), args=(make_tensor(*sb),)), name=name)
    for sa, sb, name in [((2, 3), (3, 4), "mm_dtype"), ((3,), (3,), "dot_dtype"),
                         ((2, 3), (3,), "mv_dtype"), ((2, 2, 3), (2, 3, 4), "bmm_dtype")]:
        yield ErrorInput(SampleInput(make_tensor(*sa), args=(make_tensor(*sb,
                                                                         dtype="float64"),)),
                         name=name)
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(3,)), TypeError, name="not_tensor")


def _mm_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 3), args=(t(3, 4),), name="mm")
    yield SampleInput(t(1, 3), args=(t(3, 1),), name="row_col")
    yield SampleInput(t(4, 3, noncontiguous=True), args=(t(3, 2),), name="strided")


def _mm_errors():
    yield ErrorInput(SampleInput(make_tensor(3), args=(make_tensor(3, 4),)), name="1d")
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(make_tensor(2, 3, 4),)), name="3d")
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(make_tensor(4, 4),)), name="size")
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(make_tensor(3, 4, dtype="float64"),)),
                     name="dtype")
    yield ErrorInput(SampleInput(make_tensor(2, 3, dtype="complex64"), args=(make_tensor(3, 4),)),
                     name="complex_dtype")
    b = make_tensor(2, 2, dtype="bool")
    yield ErrorInput(SampleInput(b, args=(b,)), NotImplementedError, name="bool")


def _bmm_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(5, 2, 3), args=(t(5, 3, 4),), name="bmm")
    yield SampleInput(t(1, 2, 3), args=(t(1, 3, 1),), name="batch_of_one")


def _bmm_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(make_tensor(2, 3, 4),)), name="2d")
    yield ErrorInput(SampleInput(make_tensor(2, 2, 3), args=(make_tensor(3, 3, 4),)),
                     name="batch")
    yield ErrorInput(SampleInput(make_tensor(2, 2, 3), args=(make_tensor(2, 4, 4),)),
                     name="inner")


def _mv_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 3), args=(t(3),), name="mv")
    yield SampleInput(t(2, 3, noncontiguous=True), args=(t(3, noncontiguous=True),),
                      name="strided")


def _mv_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(make_tensor(4),)), name="size")
    yield ErrorInput(SampleInput(make_tensor(3), args=(make_tensor(3),)), name="1d")
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(make_tensor(3, dtype="float64"),)),
                     name="dtype")


def _dot_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(5), args=(t(5),), name="dot")
    yield SampleInput(t(0), args=(t(0),), name="empty")


def _dot_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(make_tensor(2, 3),)), name="2d")
    yield ErrorInput(SampleInput(make_tensor(3), args=(make_tensor(4),)), name="size")
    yield ErrorInput(SampleInput(make_tensor(3), args=(make_tensor(3, dtype="float64"),)),
                     name="dtype")


def _outer_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3), args=(t(4),), name="outer")
    yield SampleInput(t(1), args=(t(2),), name="small")
    other = "float32" if dtype == "int64" else "int64"
    yield SampleInput(t(3), args=(make_tensor(2, dtype=other),), name=f"{other}_other")


def _outer_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(make_tensor(2),)), name="2d")


def _addmm_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 4), args=(t(2, 3), t(3, 4)), name="addmm")
    yield SampleInput(t(4), args=(t(2, 3), t(3, 4)), name="broadcast_row")
    yield SampleInput(t(2, 1), args=(t(2, 3), t(3, 4)), kwargs={"beta": 2, "alpha": 3},
                      name="broadcast_column_beta_alpha")
    yield SampleInput(t(), args=(t(2, 3), t(3, 4)), kwargs={"beta": 0.5}, name="0d_input")
    yield SampleInput(t(2, 4), args=(t(2, 3), t(3, 4)), kwargs={"beta": 0}, name="beta0")


def _addmm_errors():
    yield ErrorInput(SampleInput(make_tensor(3), args=(make_tensor(2, 3), make_tensor(3, 4))),
                     name="input_shape")
    yield ErrorInput(SampleInput(make_tensor(4), args=(make_tensor(2, 3), make_tensor(2, 4))),
                     name="mat_shapes")
    yield ErrorInput(SampleInput(make_tensor(4), args=(make_tensor(3), make_tensor(3, 4))),
                     name="1d")
    yield ErrorInput(SampleInput(make_tensor(2, 4, dtype="float64"),
                                 args=(make_tensor(2, 3), make_tensor(3, 4))), name="dtype")


def _inplace(name):
    fn = lambda x, *a, **k: getattr(x.clone(), name)(*a, **k)  # noqa: E731
    return dict(op=fn, torch_op=fn)


def _addmm_inplace_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 4), args=(t(2, 3), t(3, 4)), name="addmm_")
    yield SampleInput(t(2, 4), args=(t(2, 3), t(3, 4)), kwargs={"beta": 0.5, "alpha": 2},
                      name="beta_alpha")


def _baddbmm_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(5, 2, 4), args=(t(5, 2, 3), t(5, 3, 4)), name="baddbmm")
    yield SampleInput(t(4), args=(t(5, 2, 3), t(5, 3, 4)), kwargs={"alpha": 0.5},
                      name="broadcast_alpha")
    yield SampleInput(t(5, 1, 4), args=(t(5, 2, 3), t(5, 3, 4)), kwargs={"beta": 2},
                      name="broadcast_beta")


def _baddbmm_inplace_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(5, 2, 4), args=(t(5, 2, 3), t(5, 3, 4)), kwargs={"beta": 2},
                      name="baddbmm_")


def _baddbmm_errors():
    yield ErrorInput(SampleInput(make_tensor(3), args=(make_tensor(5, 2, 3),
                                                       make_tensor(5, 3, 4))),
                     name="input_shape")


def _addbmm_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 4), args=(t(5, 2, 3), t(5, 3, 4)), name="addbmm")
    yield SampleInput(t(4), args=(t(5, 2, 3), t(5, 3, 4)), kwargs={"alpha": 0.5},
                      name="broadcast_alpha")
    yield SampleInput(t(2, 1), args=(t(1, 2, 3), t(1, 3, 4)), kwargs={"beta": 2},
                      name="one_batch_beta")


def _addbmm_inplace_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 4), args=(t(5, 2, 3), t(5, 3, 4)), kwargs={"beta": 2, "alpha": 3},
                      name="addbmm_")


def _addbmm_errors():
    yield ErrorInput(SampleInput(make_tensor(3), args=(make_tensor(5, 2, 3),
                                                       make_tensor(5, 3, 4))),
                     name="input_shape")
    yield ErrorInput(SampleInput(make_tensor(2, 4), args=(make_tensor(5, 2, 3),
                                                          make_tensor(4, 3, 4))),
                     name="batch_counts")
    yield ErrorInput(SampleInput(make_tensor(2, 4), args=(make_tensor(5, 2, 3),
                                                          make_tensor(5, 2, 4))),
                     name="inner_sizes")


def _trace_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3, 3), name="square")
    yield SampleInput(t(2, 4), name="wide")
    yield SampleInput(t(4, 2), name="tall")


def _trace_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3, 4)), name="3d")
    yield ErrorInput(SampleInput(make_tensor(2, 2, dtype="bool")), NotImplementedError,
                     name="bool")


def _tensordot_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 3, 4), args=(t(3, 4, 5),), name="default_2")
    yield SampleInput(t(2, 3, 4), args=(t(4, 5),), kwargs={"dims": 1}, name="dims1")
    yield SampleInput(t(2, 3), args=(t(4, 5),), kwargs={"dims": 0}, name="dims0")
    yield SampleInput(t(2, 3, 4), args=(t(4, 3, 5),), kwargs={"dims": ([1, 2], [1, 0])},
                      name="lists_permuted")
    yield SampleInput(t(3, 2, 4), args=(t(5, 3),), kwargs={"dims": ([0], [1])},
                      name="lists_one")
    yield SampleInput(t(2, 3, 4), args=(t(4, 2, 3),), kwargs={"dims": ([2, 0, 1], [0, 1, 2])},
                      name="full")


def _tensordot_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(make_tensor(4, 5),),
                                 kwargs={"dims": 1}), name="size")
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(make_tensor(3, 5),),
                                 kwargs={"dims": -1}), name="negative")
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(make_tensor(3, 4),),
                                 kwargs={"dims": 3}), name="too_many")
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(make_tensor(3, 4),),
                                 kwargs={"dims": ([1, 0], [0])}), name="lengths")
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(make_tensor(3, 4, dtype="float64"),),
                                 kwargs={"dims": 1}), name="dtype")


def _inner_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3), args=(t(3),), name="vectors")
    yield SampleInput(t(2, 3), args=(t(4, 3),), name="matrices")
    yield SampleInput(t(), args=(t(2, 3),), name="0d")


_EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)], "matmul"),
    ("ij,jk", [(2, 3), (3, 4)], "implicit"),
    ("ba,cb", [(2, 3), (4, 2)], "implicit_sorted"),
    ("aB", [(2, 3)], "implicit_upper"),
    ("ii", [(3, 3)], "trace"),
    ("ii->i", [(3, 3)], "diagonal"),
    ("iji->j", [(3, 2, 3)], "diagonal_sum"),
    ("ij->ji", [(2, 3)], "transpose"),
    ("ij->", [(2, 3)], "sum"),
    ("ij->j", [(2, 3)], "sum_rows"),
    ("i,j->ij", [(3,), (4,)], "outer"),
    ("i,i->", [(4,), (4,)], "dot"),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)], "bmm"),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], "chain3"),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 2), (2, 4), (4, 2)], "chain4"),
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)], "ellipsis"),
    ("...ij,...jk", [(5, 1, 2, 3), (4, 3, 4)], "ellipsis_broadcast_implicit"),
    ("i...->...", [(2, 3, 4)], "ellipsis_sum"),
    ("ij,ij->ij", [(2, 3), (1, 3)], "label_broadcast"),
    ("ij,kl->ijkl", [(2, 1), (3, 2)], "no_contraction"),
    ("ijk,ik->j", [(2, 3, 4), (2, 4)], "sum_two"),
    (" i j , j k -> i k ", [(2, 3), (3, 4)], "spaces"),
    ("->", [()], "0d"),
    ("i,->i", [(3,), ()], "0d_operand"),
]


def _einsum_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    for eq, shapes, name in _EINSUM:
        yield SampleInput(eq, args=tuple(t(*s) for s in shapes), name=name)
    x = t(3, 3)
    yield SampleInput("ij,jk->ik", args=(x, x), name="same_operand_twice")
    yield SampleInput("ij,jk", args=([t(2, 3), t(3, 4)],), name="operand_list")
    yield SampleInput(t(2, 3), args=([0, 1], t(3, 4), [1, 2], [0, 2]), name="sublist")
    yield SampleInput(t(2, 3), args=([0, 1], t(3, 4), [1, 2]), name="sublist_implicit")
    yield SampleInput(t(5, 2, 3), args=([Ellipsis, 0, 1], t(3,), [1], [Ellipsis, 0]),
                      name="sublist_ellipsis")


def _einsum_errors():
    def e(eq, *shapes, name):
        return ErrorInput(SampleInput(eq, args=tuple(make_tensor(*s) for s in shapes)),
                          name=name)
    yield e("ij,jk->ik", (2, 3), (4, 5), name="size")
    yield e("ij,jk->ik", (2, 3), name="fewer_operands")
    yield e("i", (2,), (2,), name="more_operands")
    yield e("ijk,jk->ik", (2, 3), (3, 5), name="rank")
    yield e("...ij", (2,), name="rank_ellipsis")
    yield e("ij->k", (2, 3), name="output_label")
    yield e("ij->ii", (2, 3), name="output_repeated")
    yield e("i1->i", (2, 3), name="bad_character")
    yield e("i.j", (2, 3), name="lone_dot")
    yield e("ii->", (2, 3), name="diagonal_size")
    yield ErrorInput(SampleInput("i,i", args=(make_tensor(2), make_tensor(2, dtype="int64"))),
                     name="dtype")
    yield ErrorInput(SampleInput(make_tensor(2), args=([60],)), ValueError,
                     name="sublist_range")


def _same(fn):
    return dict(op=fn, torch_op=fn)


OPS = [
    OpInfo("matmul", _matmul_samples, dtypes=_WITH_INT, error_inputs=_matmul_errors),
    OpInfo("matmul", _matmul_samples, variant="method", method=True, dtypes=_FLOAT),
    OpInfo("matmul", _t_other_samples, variant="t_other", dtypes=_FLOAT,
           **_same(lambda a, b: a @ b.t())),
    OpInfo("__matmul__", _matmul_samples, dtypes=_FLOAT, **_same(operator.matmul)),
    OpInfo("__rmatmul__", _mm_samples, dtypes=_FLOAT,
           **_same(lambda a, b: b.__rmatmul__(a))),
    OpInfo("mm", _mm_samples, dtypes=_WITH_INT, error_inputs=_mm_errors),
    OpInfo("bmm", _bmm_samples, dtypes=_WITH_INT, error_inputs=_bmm_errors),
    OpInfo("mv", _mv_samples, dtypes=_WITH_INT, error_inputs=_mv_errors),
    OpInfo("dot", _dot_samples, dtypes=_WITH_INT, error_inputs=_dot_errors),
    OpInfo("vdot", _dot_samples, dtypes=_WITH_INT),
    OpInfo("outer", _outer_samples, dtypes=_WITH_INT, error_inputs=_outer_errors),
    OpInfo("ger", _outer_samples, dtypes=_FLOAT),
    OpInfo("addmm", _addmm_samples, dtypes=_WITH_INT, error_inputs=_addmm_errors),
    OpInfo("addmm_", _addmm_inplace_samples, dtypes=_FLOAT, method=True, **_inplace("addmm_")),
    OpInfo("baddbmm", _baddbmm_samples, dtypes=_WITH_INT, error_inputs=_baddbmm_errors),
    OpInfo("baddbmm_", _baddbmm_inplace_samples, dtypes=_FLOAT, method=True,
           **_inplace("baddbmm_")),
    OpInfo("addbmm", _addbmm_samples, dtypes=_WITH_INT, error_inputs=_addbmm_errors),
    OpInfo("addbmm_", _addbmm_inplace_samples, dtypes=_FLOAT, method=True,
           **_inplace("addbmm_")),
    OpInfo("trace", _trace_samples, dtypes=_WITH_INT, error_inputs=_trace_errors),
    OpInfo("tensordot", _tensordot_samples, dtypes=_WITH_INT, error_inputs=_tensordot_errors),
    OpInfo("inner", _inner_samples, dtypes=_WITH_INT),
    # PyTorch decomposes einsum into permutes and bmm: its grad_fn names vary by equation.
    OpInfo("einsum", _einsum_samples, dtypes=_WITH_INT, compare_grad_with_torch=False,
           error_inputs=_einsum_errors),
]
