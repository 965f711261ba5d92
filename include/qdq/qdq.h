/* qdq: exact linear quantization and dequantization. The C ABI.
 *
 * Every function returns a qdq_status_code; on failure qdq_last_error() returns the message (it
 * names the offending value and the rule) for the calling thread until its next qdq call. Nothing
 * throws or aborts across this boundary. Types are ONNX TensorProto codes; shapes count elements;
 * 4-bit types pack two elements per byte (low nibble first), 2-bit types four (lowest bits first);
 * the 6-bit float types (27, 28) take one byte each, the code in its low bits.
 */
#ifndef QDQ_QDQ_H_
#define QDQ_QDQ_H_

#include <stddef.h>
#include <stdint.h>

#include "qdq/export.h"
#include "qdq/version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum qdq_status_code {
  QDQ_OK = 0,
  QDQ_INVALID_ARGUMENT = 1,
  QDQ_INTERNAL = 2,
} qdq_status_code;

typedef struct qdq_tensor {
  int32_t type;          /* TensorProto code */
  int32_t rank;          /* 0 for a scalar */
  const int64_t* shape;  /* rank entries; may be NULL when rank == 0 */
  const void* data;      /* any address: elements need not sit on their type's alignment */
} qdq_tensor;

typedef struct qdq_mutable_tensor {
  int32_t type;
  int32_t rank;
  const int64_t* shape;
  void* data;            /* any address, as qdq_tensor's */
} qdq_mutable_tensor;

typedef struct qdq_quantize_attributes {
  int64_t axis;         /* default 1 */
  int64_t block_size;   /* default 0 */
  int64_t saturate;     /* default 1 */
  int64_t output_dtype; /* default 0 (unset) */
  int64_t precision;    /* default 0 (unset) */
  int64_t opset;        /* default 25 */
} qdq_quantize_attributes;

typedef struct qdq_dequantize_attributes {
  int64_t axis;
  int64_t block_size;
  int64_t output_dtype;
  int64_t opset;
} qdq_dequantize_attributes;

QDQ_API void qdq_quantize_attributes_init(qdq_quantize_attributes* attributes);
QDQ_API void qdq_dequantize_attributes_init(qdq_dequantize_attributes* attributes);

/* The library's version, "MAJOR.MINOR.PATCH". It can differ from QDQ_VERSION_STRING, the version of
 * the header a program was compiled against, when a newer libqdq.so is loaded. */
QDQ_API const char* qdq_version(void);

/* The message of the calling thread's last failed call ("" if none). */
QDQ_API const char* qdq_last_error(void);

/* Output element type of an operator without running it (for allocating y). zero_point may be
 * NULL. */
QDQ_API qdq_status_code qdq_quantize_linear_output_type(const qdq_tensor* x, const qdq_tensor* y_scale,
                                                        const qdq_tensor* y_zero_point,
                                                        const qdq_quantize_attributes* attributes,
                                                        int32_t* output_type);
QDQ_API qdq_status_code qdq_dequantize_linear_output_type(const qdq_tensor* x, const qdq_tensor* x_scale,
                                                          const qdq_tensor* x_zero_point,
                                                          const qdq_dequantize_attributes* attributes,
                                                          int32_t* output_type);

/* ONNX QuantizeLinear / DequantizeLinear (versions 10..25 via attributes->opset). */
QDQ_API qdq_status_code qdq_quantize_linear(const qdq_tensor* x, const qdq_tensor* y_scale,
                                            const qdq_tensor* y_zero_point,
                                            const qdq_quantize_attributes* attributes,
                                            const qdq_mutable_tensor* y);
QDQ_API qdq_status_code qdq_dequantize_linear(const qdq_tensor* x, const qdq_tensor* x_scale,
                                              const qdq_tensor* x_zero_point,
                                              const qdq_dequantize_attributes* attributes,
                                              const qdq_mutable_tensor* y);

/* AMD Quark com.amd.quark ExtendedQuantizeLinear / ExtendedDequantizeLinear (version 1). */
QDQ_API qdq_status_code qdq_extended_quantize_linear(const qdq_tensor* x, const qdq_tensor* y_scale,
                                                     const qdq_tensor* y_zero_point, int64_t axis,
                                                     const qdq_mutable_tensor* y);
QDQ_API qdq_status_code qdq_extended_dequantize_linear(const qdq_tensor* x, const qdq_tensor* x_scale,
                                                       const qdq_tensor* x_zero_point, int64_t axis,
                                                       const qdq_mutable_tensor* y);

/* The toolkit (qdq/toolkit.hpp): scales and zero points from data, dynamic quantization and ONNX
 * DynamicQuantizeLinear. Formulas and edge cases: docs/semantics.md, "Scales from data". */
typedef enum qdq_scale_method {
  QDQ_SCALE_MINMAX = 0,               /* integers, asymmetric */
  QDQ_SCALE_SYMMETRIC = 1,            /* integers: max|x| / ((qmax - qmin) / 2); floats: max|x| / max(T) */
  QDQ_SCALE_SYMMETRIC_RESTRICTED = 2, /* integers: max|x| / ((qmax - qmin - 1) / 2) */
  QDQ_SCALE_MX_FLOOR = 3,             /* OCP MX shared exponents (float element types) */
  QDQ_SCALE_MX_CEIL = 4,
  QDQ_SCALE_MX_EVEN = 5,
  QDQ_SCALE_MX_RCEIL = 6,
} qdq_scale_method;

typedef enum qdq_granularity {
  QDQ_PER_TENSOR = 0,
  QDQ_PER_AXIS = 1,
  QDQ_BLOCKED = 2,
} qdq_granularity;

typedef struct qdq_qparams_options {
  int32_t quantized_type; /* default INT8 (3) */
  int32_t scale_type;     /* default FLOAT (1); FLOAT8E8M0 (24) with the MX methods */
  int32_t method;         /* qdq_scale_method, default QDQ_SCALE_MINMAX */
  int32_t granularity;    /* qdq_granularity, default QDQ_PER_TENSOR */
  int64_t axis;           /* default 1 */
  int64_t block_size;     /* default 0 */
} qdq_qparams_options;

QDQ_API void qdq_qparams_options_init(qdq_qparams_options* options);

/* The scale's (and zero point's) shape for x's shape: *rank entries written to shape, which must
 * hold x->rank entries (a scale never has more dims than x). */
QDQ_API qdq_status_code qdq_qparams_shape(const qdq_tensor* x, const qdq_qparams_options* options, int32_t* rank,
                                          int64_t* shape);

/* Scales (scale->type == options->scale_type) and zero points (zero_point->type ==
 * options->quantized_type; NULL where every zero point is 0) of x. */
QDQ_API qdq_status_code qdq_compute_qparams(const qdq_tensor* x, const qdq_qparams_options* options,
                                            const qdq_mutable_tensor* scale, const qdq_mutable_tensor* zero_point);

/* qdq_compute_qparams, then QuantizeLinear with them into y (options->quantized_type, x's shape). */
QDQ_API qdq_status_code qdq_dynamic_quantize(const qdq_tensor* x, const qdq_qparams_options* options,
                                             const qdq_mutable_tensor* y, const qdq_mutable_tensor* scale,
                                             const qdq_mutable_tensor* zero_point);

/* ONNX DynamicQuantizeLinear-11: float32 x -> uint8 y, a float32 scale and a uint8 zero point. */
QDQ_API qdq_status_code qdq_dynamic_quantize_linear(const qdq_tensor* x, const qdq_mutable_tensor* y, float* y_scale,
                                                    uint8_t* y_zero_point);

/* DirectML element-wise quantize / dequantize linear; output type taken from y->type. */
QDQ_API qdq_status_code qdq_elementwise_quantize_linear(const qdq_tensor* x, const qdq_tensor* scale,
                                                        const qdq_tensor* zero_point,
                                                        const qdq_mutable_tensor* y);
QDQ_API qdq_status_code qdq_elementwise_dequantize_linear(const qdq_tensor* x, const qdq_tensor* scale,
                                                          const qdq_tensor* zero_point,
                                                          const qdq_mutable_tensor* y);

/* DirectML DML_ELEMENT_WISE_QUANTIZE_LINEAR / DML_ELEMENT_WISE_DEQUANTIZE_LINEAR as DirectML
 * describes them: four buffer tensor descriptions of equal sizes (broadcasting by 0-strides),
 * checked against one DML_FEATURE_LEVEL's tables (DirectML's values: 0x1000 for 1_0 ... 0x6400
 * for 6_4; QDQ_DML_FEATURE_LEVEL_DEFAULT is 6_2, the highest the operators' tables name). */
#define QDQ_DML_FEATURE_LEVEL_DEFAULT 0x6200

typedef struct qdq_dml_tensor_desc {
  int32_t type;            /* TensorProto code (FLOAT32 1, UINT8 2, INT8 3, ...) */
  int32_t dimension_count; /* DimensionCount */
  const int64_t* sizes;    /* dimension_count entries, in elements */
  const int64_t* strides;  /* dimension_count entries in elements, 0 repeats; NULL: packed */
  uint64_t total_tensor_size_in_bytes; /* 0: DMLCalcBufferTensorSize of sizes and strides */
  const void* data;        /* inputs' buffers; NULL for the output */
} qdq_dml_tensor_desc;

/* Checks the description at feature_level and writes the output into output_data, a buffer of
 * the output's TotalTensorSizeInBytes (only the elements its strides address are written).
 * zero_point may be NULL from feature level 6_2 (zero point 0). */
QDQ_API qdq_status_code qdq_directml_quantize_linear(const qdq_dml_tensor_desc* input, const qdq_dml_tensor_desc* scale,
                                                     const qdq_dml_tensor_desc* zero_point,
                                                     const qdq_dml_tensor_desc* output, int32_t feature_level,
                                                     void* output_data);
QDQ_API qdq_status_code qdq_directml_dequantize_linear(const qdq_dml_tensor_desc* input,
                                                       const qdq_dml_tensor_desc* scale,
                                                       const qdq_dml_tensor_desc* zero_point,
                                                       const qdq_dml_tensor_desc* output, int32_t feature_level,
                                                       void* output_data);

/* DMLCalcBufferTensorSize: the bytes a description addresses, rounded up to 4 (0 on a malformed
 * description; qdq_last_error() says why). */
QDQ_API uint64_t qdq_dml_calc_buffer_tensor_size(const qdq_dml_tensor_desc* desc);

/* AMD Quark com.amd.quark MXQuantizeDequantize / BFPQuantizeDequantize (version 1): x float32
 * (type 1) or float16 (10), y of x's type and shape (y->data may equal x->data). The attributes
 * are Quark's, with Quark's defaults from the _init functions; the strings must stay valid during
 * the call. See qdq/quark_ops.hpp. */
typedef struct qdq_mx_attributes {
  const char* element_dtype; /* "int8"; fp8_e5m2, fp8_e4m3, fp6_e3m2, fp6_e2m3, fp4_e2m1 */
  int64_t axis;              /* 1 */
  int64_t block_size;        /* 32 */
  int64_t rounding_mode;     /* 0 */
} qdq_mx_attributes;

typedef struct qdq_bfp_attributes {
  const char* bfp_method; /* "to_bfp"; to_bfp_prime */
  int64_t axis;           /* 1 */
  int64_t bit_width;      /* 16 */
  int64_t block_size;     /* 8 */
  int64_t rounding_mode;  /* 0 */
  int64_t sub_block_size; /* 2 */
  int64_t sub_block_shift_bits;            /* 1 */
  int64_t convert_to_bfloat_before_bfp;    /* 0 */
  int64_t use_compiler_version_cpu_kernel; /* 0 */
} qdq_bfp_attributes;

QDQ_API void qdq_mx_attributes_init(qdq_mx_attributes* attributes);
QDQ_API void qdq_bfp_attributes_init(qdq_bfp_attributes* attributes);
QDQ_API qdq_status_code qdq_mx_quantize_dequantize(const qdq_tensor* x, const qdq_mx_attributes* attributes,
                                                   const qdq_mutable_tensor* y);
QDQ_API qdq_status_code qdq_bfp_quantize_dequantize(const qdq_tensor* x, const qdq_bfp_attributes* attributes,
                                                    const qdq_mutable_tensor* y);

/* Fused fake quantization: y = DequantizeLinear(QuantizeLinear(x)) in one pass, bit-identical to
 * the two operators composed (the codes never exist as a tensor). quantized_dtype is
 * QuantizeLinear's output_dtype (the codes' type); output_dtype is y's type (float32, float16 or
 * bfloat16; 0: x's type, float32 for int32 x; before opset 23 it must be the scale's type). */
typedef struct qdq_quantize_dequantize_attributes {
  int64_t axis;            /* default 1 */
  int64_t block_size;      /* default 0 */
  int64_t saturate;        /* default 1 */
  int64_t quantized_dtype; /* default 0 (the zero point's type, else uint8) */
  int64_t precision;       /* default 0 (unset) */
  int64_t output_dtype;    /* default 0 (x's type) */
  int64_t opset;           /* default 25 */
} qdq_quantize_dequantize_attributes;

QDQ_API void qdq_quantize_dequantize_attributes_init(qdq_quantize_dequantize_attributes* attributes);

/* y's element type without running it. */
QDQ_API qdq_status_code qdq_quantize_dequantize_linear_output_type(const qdq_tensor* x, const qdq_tensor* scale,
                                                                   const qdq_tensor* zero_point,
                                                                   const qdq_quantize_dequantize_attributes* attributes,
                                                                   int32_t* output_type);

/* mask: NULL, or a uint8 tensor (type 2) of x's shape that receives the straight-through mask: 1
 * where x / scale rounds into the quantized type's range before any clamp, else 0 (NaN: 0). */
QDQ_API qdq_status_code qdq_quantize_dequantize_linear(const qdq_tensor* x, const qdq_tensor* scale,
                                                       const qdq_tensor* zero_point,
                                                       const qdq_quantize_dequantize_attributes* attributes,
                                                       const qdq_mutable_tensor* y, const qdq_mutable_tensor* mask);

/* Quark ExtendedQuantizeLinear then ExtendedDequantizeLinear (y float32); no mask for int32/uint32. */
QDQ_API qdq_status_code qdq_extended_quantize_dequantize_linear(const qdq_tensor* x, const qdq_tensor* scale,
                                                                const qdq_tensor* zero_point, int64_t axis,
                                                                const qdq_mutable_tensor* y,
                                                                const qdq_mutable_tensor* mask);

#ifdef __cplusplus
}
#endif

#endif /* QDQ_QDQ_H_ */
