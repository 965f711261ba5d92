"""qdq's ONNX Runtime custom-op library in real onnxruntime sessions.

Every op and type gives the same bits as the qdq Python API, with 1 and 2 intra-op threads; a
model mixing standard ORT ops with com.amd.quark nodes runs; invalid inputs raise an ORT error in a
process that survives. Outputs are read as raw bytes from the OrtValue (ORT cannot hand int4,
float8 or bfloat16 tensors to numpy), so packed nibbles and NaN encodings are compared exactly.
"""

from __future__ import annotations

import ctypes

import ml_dtypes
import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

import qdq  # noqa: E402

SEED = 4711
BITS = {TP.UINT4: 4, TP.INT4: 4, TP.FLOAT4E2M1: 4, TP.UINT2: 2, TP.INT2: 2}
ONNX_QUANTIZED = [TP.UINT8, TP.INT8, TP.UINT16, TP.INT16, TP.UINT4, TP.INT4, TP.UINT2, TP.INT2,
                  TP.FLOAT8E4M3FN, TP.FLOAT8E4M3FNUZ, TP.FLOAT8E5M2, TP.FLOAT8E5M2FNUZ, TP.FLOAT4E2M1]
QUARK_QUANTIZED = [TP.INT8, TP.UINT8, TP.INT16, TP.UINT16, TP.INT32, TP.UINT32, TP.FLOAT16, TP.BFLOAT16]


def dtype(code: int) -> np.dtype:
    return qdq.dtype_from_code(code)


def packed_bytes(array: np.ndarray, code: int) -> bytes:
    """The tensor's bytes as ORT stores them (4- and 2-bit types packed, low bits first)."""
    raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8 if array.dtype.itemsize == 1 else np.uint8)
    bits = BITS.get(code)
    if bits is None:
        return raw.tobytes()
    per = 8 // bits
    codes = raw & ((1 << bits) - 1)
    codes = np.concatenate([codes, np.zeros((-len(codes)) % per, np.uint8)]).reshape(-1, per).astype(np.uint16)
    return bytes((codes << (np.arange(per) * bits)).sum(axis=1).astype(np.uint8))


def initializer(name: str, value: np.ndarray):
    return numpy_helper.from_array(np.asarray(value), name)


def session(nodes, inputs, outputs, initializers, threads: int, domains):
    graph = helper.make_graph(nodes, "qdq_ort", inputs, outputs, initializers)
    opsets = [helper.make_opsetid("", 21)] + [helper.make_opsetid(d, 1) for d in domains]
    model = helper.make_model(graph, opset_imports=opsets, ir_version=10)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.register_custom_ops_library(qdq.ort_library_path())
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def run_single(op: str, domain: str, x, scale, zp, out_code: int, threads: int, **attrs) -> bytes:
    """One node with every input an initializer; returns the output's raw bytes."""
    names = ["x", "s"] + (["zp"] if zp is not None else [])
    inits = [initializer("x", x), initializer("s", scale)] + ([initializer("zp", zp)] if zp is not None else [])
    node = helper.make_node(op, names, ["y"], domain=domain, **attrs)
    out = helper.make_tensor_value_info("y", out_code, list(np.shape(x)))
    sess = session([node], [], [out], inits, threads, [domain])
    value = sess.run_with_ort_values(["y"], {})[0]
    return ctypes.string_at(value.data_ptr(), value.tensor_size_in_bytes())


def float_inputs(rng, shape):
    x = (rng.standard_normal(shape) * 40).astype(np.float32)
    flat = x.reshape(-1)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 2.5, -2.5, 0.5], np.float32)
    flat[: min(len(specials), flat.size)] = specials[: flat.size]
    return x


# Shapes: a small one and one large enough (3 * 2^16 elements) that qdq splits it over ORT's pool.
SHAPES = [(6, 10), (3, 65536)]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("code", QUARK_QUANTIZED)
@pytest.mark.parametrize("domain,q_name,dq_name", [("com.amd.quark", "ExtendedQuantizeLinear", "ExtendedDequantizeLinear"),
                                                    ("com.vai.quantize", "VitisQuantizeLinear", "VitisDequantizeLinear")])
def test_quark_ops_match_the_python_api(domain, q_name, dq_name, code, shape, threads):
    rng = np.random.default_rng(SEED)
    x = float_inputs(rng, shape)
    for per_axis in (False, True):
        scale = (rng.random(shape[0]) * 0.5 + 0.01).astype(np.float32) if per_axis else np.float32(0.37)
        zp_values = rng.integers(-3, 4, size=np.shape(scale))
        if code in (TP.UINT8, TP.UINT16, TP.UINT32):
            zp_values = np.abs(zp_values)
        zp = np.asarray(zp_values).astype(dtype(code))
        want_q = qdq.extended_quantize_linear(x, scale, zp, axis=0)
        got_q = run_single(q_name, domain, x, scale, zp, code, threads, axis=0)
        assert got_q == packed_bytes(want_q, code), (code, per_axis)
        want_dq = qdq.extended_dequantize_linear(want_q, scale, zp, axis=0)
        got_dq = run_single(dq_name, domain, want_q, scale, zp, TP.FLOAT, threads, axis=0)
        assert got_dq == want_dq.tobytes(), (code, per_axis)


GRANULARITIES = {
    # name: (scale shape for x (8, 70), axis, block_size)
    "per-tensor": ((), 1, 0),
    "per-axis": ((70,), 1, 0),
    "blocked-first": ((3, 70), 0, 3),
    "blocked-last": ((8, 3), 1, 32),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("granularity", list(GRANULARITIES))
@pytest.mark.parametrize("code", ONNX_QUANTIZED)
def test_ai_qdq_quantize_and_dequantize_every_type(code, granularity, threads):
    rng = np.random.default_rng(SEED + code)
    x = float_inputs(rng, (8, 70))
    scale_shape, axis, block = GRANULARITIES[granularity]
    scale = (rng.random(scale_shape) * 2 + 0.05).astype(np.float32)
    attrs = {"axis": axis, "block_size": block, "output_dtype": code}
    want_q = qdq.quantize_linear(x, scale, axis=axis, block_size=block, output_dtype=code)
    got_q = run_single("QuantizeLinear", "ai.qdq", x, scale, None, code, threads, **attrs)
    assert got_q == packed_bytes(want_q, code)
    for out in (TP.FLOAT, TP.FLOAT16, TP.BFLOAT16):
        want = qdq.dequantize_linear(want_q, scale, axis=axis, block_size=block, output_dtype=out)
        x_init = numpy_helper.from_array(want_q, "x")
        node = helper.make_node("DequantizeLinear", ["x", "s"], ["y"], domain="ai.qdq", axis=axis,
                                block_size=block, output_dtype=out)
        sess = session([node], [], [helper.make_tensor_value_info("y", out, [8, 70])],
                       [x_init, initializer("s", scale)], threads, ["ai.qdq"])
        value = sess.run_with_ort_values(["y"], {})[0]
        got = ctypes.string_at(value.data_ptr(), value.tensor_size_in_bytes())
        assert got == want.tobytes(), (code, out)


@pytest.mark.parametrize("x_dtype", [np.float16, ml_dtypes.bfloat16, np.int32])
def test_ai_qdq_other_inputs_precision_e8m0_and_saturate(x_dtype):
    rng = np.random.default_rng(SEED)
    x = (rng.standard_normal((4, 64)) * 50).astype(x_dtype)
    # e8m0 scales (2^-3 .. 2^4), blocked along the last axis; precision float16; saturate 0.
    scale = np.exp2(rng.integers(-3, 5, size=(4, 2)).astype(np.float32)).astype(ml_dtypes.float8_e8m0fnu)
    for code, attrs in [(TP.FLOAT8E4M3FN, {"saturate": 0}), (TP.INT2, {}), (TP.FLOAT4E2M1, {}),
                        (TP.INT8, {"precision": TP.FLOAT16})]:
        want = qdq.quantize_linear(x, scale, axis=1, block_size=32, output_dtype=code, **attrs)
        got = run_single("QuantizeLinear", "ai.qdq", x, scale, None, code, 1, axis=1, block_size=32,
                         output_dtype=code, **attrs)
        assert got == packed_bytes(want, code), (code, attrs)
        back = qdq.dequantize_linear(want, scale, axis=1, block_size=32, output_dtype=TP.FLOAT)
        got_back = run_single("DequantizeLinear", "ai.qdq", want, scale, None, TP.FLOAT, 1, axis=1, block_size=32,
                              output_dtype=TP.FLOAT)
        assert got_back == back.tobytes(), code


def test_model_mixing_standard_ops_and_quark_nodes():
    """Relu -> ExtendedQuantizeLinear (int16, per-axis) -> ExtendedDequantizeLinear -> Add."""
    rng = np.random.default_rng(SEED)
    x = float_inputs(rng, (4, 33))
    scale = np.array([0.5, 0.25, 2.0, 1.0], np.float32)
    zp = np.array([3, -1, 0, 7], np.int16)
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("ExtendedQuantizeLinear", ["r", "s", "zp"], ["q"], domain="com.amd.quark", axis=0),
        helper.make_node("ExtendedDequantizeLinear", ["q", "s", "zp"], ["d"], domain="com.amd.quark", axis=0),
        helper.make_node("Add", ["d", "x"], ["y"]),
    ]
    sess = session(nodes, [helper.make_tensor_value_info("x", TP.FLOAT, [4, 33])],
                   [helper.make_tensor_value_info("y", TP.FLOAT, [4, 33])],
                   [initializer("s", scale), initializer("zp", zp)], 2, ["com.amd.quark"])
    (got,) = sess.run(None, {"x": x})
    relu = np.maximum(x, 0, where=~np.isnan(x), out=x.copy())
    d = qdq.extended_dequantize_linear(qdq.extended_quantize_linear(relu, scale, zp, axis=0), scale, zp, axis=0)
    want = d + x
    assert got.tobytes() == want.astype(np.float32).tobytes()


def test_invalid_input_raises_an_ort_error_and_the_process_survives():
    x = np.ones((2, 4), np.float32)
    scale = np.array([1.0, 2.0], np.float32)
    node = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], domain="ai.qdq", axis=5)
    sess = session([node], [helper.make_tensor_value_info("x", TP.FLOAT, [2, 4])],
                   [helper.make_tensor_value_info("y", TP.UINT8, [2, 4])], [initializer("s", scale)], 1, ["ai.qdq"])
    for _ in range(3):
        with pytest.raises(Exception, match=r"QuantizeLinear-25: axis 5 is outside the accepted range \[-2, 1\]"):
            sess.run(None, {"x": x})
    # A non-zero float8 zero point and a Quark blocked scale: errors, not crashes.
    zp8 = np.array(1.0, ml_dtypes.float8_e4m3fn)
    with pytest.raises(Exception, match="float8 zero points must be 0"):
        run_single("QuantizeLinear", "ai.qdq", x, np.float32(1), zp8, TP.FLOAT8E4M3FN, 1)
    with pytest.raises(Exception, match="does not define|scale must be a scalar"):
        run_single("ExtendedQuantizeLinear", "com.amd.quark", x, np.ones((2, 4), np.float32),
                   np.zeros((2, 4), np.int8), TP.INT8, 1)
    # The process is fine: a valid run afterwards.
    ok = run_single("QuantizeLinear", "ai.qdq", x, np.float32(0.5), None, TP.UINT8, 1)
    assert ok == bytes([2] * 8)


def test_library_registers_in_several_sessions():
    for _ in range(3):
        got = run_single("ExtendedQuantizeLinear", "com.amd.quark", np.arange(4, dtype=np.float32),
                         np.float32(1.0), np.int8(0), TP.INT8, 1)
        assert got == bytes([0, 1, 2, 3])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("code", [TP.INT8, TP.UINT4, TP.INT2, TP.UINT2, TP.FLOAT8E4M3FN, TP.FLOAT4E2M1])
def test_ai_qdq_quantize_dequantize_linear_with_mask(code, threads):
    """ai.qdq QuantizeDequantizeLinear: y and the bool mask equal qdq.quantize_dequantize's."""
    rng = np.random.default_rng([SEED, code, threads])
    x = float_inputs(rng, (4, 70))
    scale = np.float32(rng.uniform(0.05, 1.0, size=(4, 3)))  # blocked along axis 1, partial last block
    zp = np.zeros((4, 3), np.float32).astype(dtype(code))
    if code in (TP.INT8, TP.UINT4, TP.INT2, TP.UINT2):
        info = ml_dtypes.iinfo(dtype(code))
        zp = rng.integers(int(info.min), int(info.max) + 1, size=(4, 3)).astype(dtype(code))
    want_y, want_mask = qdq.quantize_dequantize(x, scale, zp, axis=1, block_size=32, return_mask=True)
    node = helper.make_node("QuantizeDequantizeLinear", ["x", "s", "zp"], ["y", "mask"], domain="ai.qdq", axis=1,
                            block_size=32)
    sess = session([node], [], [helper.make_tensor_value_info("y", TP.FLOAT, [4, 70]),
                                helper.make_tensor_value_info("mask", TP.BOOL, [4, 70])],
                   [initializer("x", x), initializer("s", scale), initializer("zp", zp)], threads, ["ai.qdq"])
    y, mask = sess.run(None, {})
    np.testing.assert_array_equal(y.view(np.uint32), want_y.view(np.uint32))
    np.testing.assert_array_equal(mask, want_mask)


def test_ai_qdq_quantize_dequantize_linear_without_mask_and_with_a_bfloat16_y():
    rng = np.random.default_rng(SEED)
    x = float_inputs(rng, (2, 50)).astype(ml_dtypes.bfloat16)
    scale = np.array([0.5, 0.25], ml_dtypes.bfloat16)
    want = qdq.quantize_dequantize(x, scale, axis=0, quantized_dtype=np.int8)
    got = run_single("QuantizeDequantizeLinear", "ai.qdq", x, scale, None, TP.BFLOAT16, 1, axis=0,
                     quantized_dtype=TP.INT8)
    assert got == want.tobytes()
    # An e8m0 scale (y then needs no output_dtype: x's type).
    e8m0 = np.array([0.5, 4.0], ml_dtypes.float8_e8m0fnu)
    want = qdq.quantize_dequantize(x, e8m0, axis=0, quantized_dtype=np.uint8)
    assert run_single("QuantizeDequantizeLinear", "ai.qdq", x, e8m0, None, TP.BFLOAT16, 1, axis=0,
                      quantized_dtype=TP.UINT8) == want.tobytes()
    node = helper.make_node("QuantizeDequantizeLinear", ["x", "s"], ["y"], domain="ai.qdq", axis=7)
    sess = session([node], [], [helper.make_tensor_value_info("y", TP.BFLOAT16, [2, 50])],
                   [initializer("x", x), initializer("s", scale)], 1, ["ai.qdq"])
    with pytest.raises(Exception, match="axis"):
        sess.run(None, {})


@pytest.mark.parametrize("threads", [1, 2])
def test_a_node_run_again_with_new_shapes_and_values_plans_for_each(threads):
    """The library keeps each node's last plan for the input types and shapes it was made for. A
    node fed graph inputs whose values and shapes change from run to run (back to an earlier
    shape too, and through an invalid one) gives the Python API's bits every time."""
    rng = np.random.default_rng([SEED, threads])
    node = helper.make_node("ExtendedQuantizeLinear", ["x", "s", "zp"], ["y"], domain="com.amd.quark", axis=0)
    sess = session([node], [helper.make_tensor_value_info("x", TP.FLOAT, ["a", "b"]),
                            helper.make_tensor_value_info("s", TP.FLOAT, None),
                            helper.make_tensor_value_info("zp", TP.INT16, None)],
                   [helper.make_tensor_value_info("y", TP.INT16, ["a", "b"])], [], threads, ["com.amd.quark"])
    shapes = [(3, 40), (3, 40), (5, 7), (3, 40), (1, 70000), (5, 7)]
    for run, shape in enumerate(shapes):
        x = float_inputs(rng, shape)
        per_axis = run % 2 == 1
        scale = (rng.random(shape[0]) + 0.05).astype(np.float32) if per_axis else np.array(rng.random() + 0.05, np.float32)
        zp = rng.integers(-9, 10, size=np.shape(scale)).astype(np.int16)
        (got,) = sess.run(None, {"x": x, "s": scale, "zp": zp})
        want = qdq.extended_quantize_linear(x, scale, zp, axis=0)
        np.testing.assert_array_equal(got, want, err_msg=f"run {run}, shape {shape}")
        if run == 2:  # a scale of the wrong length after valid runs: an error, then valid runs again
            with pytest.raises(Exception, match="ExtendedQuantizeLinear"):
                sess.run(None, {"x": x, "s": np.ones(shape[0] + 1, np.float32),
                                "zp": np.zeros(shape[0] + 1, np.int16)})


def test_a_float8_zero_point_is_checked_on_every_run():
    """DequantizeLinear from float8 x with the zero point a graph input: the zero point must be 0 on
    every run, though the shapes repeat."""
    node = helper.make_node("DequantizeLinear", ["x", "s", "zp"], ["y"], domain="ai.qdq", axis=0)
    sess = session([node], [helper.make_tensor_value_info("x", TP.FLOAT8E4M3FN, [2, 3]),
                            helper.make_tensor_value_info("s", TP.FLOAT, [2]),
                            helper.make_tensor_value_info("zp", TP.FLOAT8E4M3FN, [2])],
                   [helper.make_tensor_value_info("y", TP.FLOAT, [2, 3])], [], 1, ["ai.qdq"])
    x = np.array([[1, 2, -3], [0.5, 448, -0.25]], ml_dtypes.float8_e4m3fn)
    scale = np.array([2.0, 0.5], np.float32)
    # ORT makes no OrtValue of an ml_dtypes array: the codes go in as bytes with the type named.
    float8 = lambda codes: ort.OrtValue.ortvalue_from_numpy_with_onnx_type(codes.view(np.uint8), TP.FLOAT8E4M3FN)  # noqa: E731
    feed = {"x": float8(x), "s": ort.OrtValue.ortvalue_from_numpy(scale)}
    want = qdq.dequantize_linear(x, scale, axis=0)

    def run(zp):
        feed["zp"] = float8(np.array(zp, ml_dtypes.float8_e4m3fn))
        value = sess.run_with_ort_values(["y"], feed)[0]
        return np.frombuffer(ctypes.string_at(value.data_ptr(), value.tensor_size_in_bytes()), np.float32)

    np.testing.assert_array_equal(run([0, 0]), want.reshape(-1))
    with pytest.raises(Exception, match="element 1 is 1.*zero points must be 0"):
        run([0, 1])
    np.testing.assert_array_equal(run([0, -0.0]), want.reshape(-1))


def test_one_session_run_from_several_threads_at_once():
    """ORT lets several threads run one session at once, so a node's kept plan is read and replaced
    concurrently: each thread feeds its own shape and values and must get its own bits."""
    from concurrent.futures import ThreadPoolExecutor

    node = helper.make_node("ExtendedDequantizeLinear", ["x", "s", "zp"], ["y"], domain="com.amd.quark", axis=0)
    sess = session([node], [helper.make_tensor_value_info("x", TP.INT8, ["a", "b"]),
                            helper.make_tensor_value_info("s", TP.FLOAT, ["a"]),
                            helper.make_tensor_value_info("zp", TP.INT8, ["a"])],
                   [helper.make_tensor_value_info("y", TP.FLOAT, ["a", "b"])], [], 1, ["com.amd.quark"])

    def work(worker: int) -> int:
        rng = np.random.default_rng([SEED, worker])
        for run in range(60):
            shape = (1 + (worker + run) % 4, 33 + 31 * worker)
            x = rng.integers(-128, 128, size=shape).astype(np.int8)
            scale = (rng.random(shape[0]) + 0.01).astype(np.float32)
            zp = rng.integers(-5, 6, size=shape[0]).astype(np.int8)
            (got,) = sess.run(None, {"x": x, "s": scale, "zp": zp})
            want = qdq.extended_dequantize_linear(x, scale, zp, axis=0)
            np.testing.assert_array_equal(got, want, err_msg=f"worker {worker}, run {run}")
        return worker

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert sorted(pool.map(work, range(4))) == [0, 1, 2, 3]
