/* qdq: the export macro of the public API.
 *
 * libqdq.so is compiled with hidden visibility, so only declarations marked QDQ_API (the C ABI in
 * qdq.h and the C++ API in qdq.hpp / element_type.h) are visible to programs that link it. For the
 * static library the mark changes nothing.
 */
#ifndef QDQ_EXPORT_H_
#define QDQ_EXPORT_H_

#if defined(_WIN32)
#define QDQ_API __declspec(dllexport)
#else
#define QDQ_API __attribute__((visibility("default")))
#endif

#endif /* QDQ_EXPORT_H_ */
