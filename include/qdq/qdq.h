/* qdq: exact linear quantization and dequantization. The C ABI.
 *
 * Every function returns a qdq_status_code; on failure qdq_last_error() returns the message (it
 * names the offending value and the rule) for the calling thread until its next qdq call. Nothing
 * throws or aborts across this boundary. Types are ONNX TensorProto codes; shapes count elements;
 * 4-bit types pack two elements per byte (low nibble first), 2-bit types four (lowest bits first).
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
  const void* data;
} qdq_tensor;

typedef struct qdq_mutable_tensor {
  int32_t type;
  int32_t rank;
  const int64_t* shape;
  void* data;
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

/* DirectML element-wise quantize / dequantize linear; output type taken from y->type. */
QDQ_API qdq_status_code qdq_elementwise_quantize_linear(const qdq_tensor* x, const qdq_tensor* scale,
                                                        const qdq_tensor* zero_point,
                                                        const qdq_mutable_tensor* y);
QDQ_API qdq_status_code qdq_elementwise_dequantize_linear(const qdq_tensor* x, const qdq_tensor* scale,
                                                          const qdq_tensor* zero_point,
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
