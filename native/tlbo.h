/*
 * tlbo.h: the plain C ABI of tlbo-native's libtorch runtime.
 *
 * Generic, not model-specific: tensors are opaque handles, and every ATen
 * operator is reached by name through the dispatcher (tlbo_op_find +
 * tlbo_op_call), so the ABI stays small while the Go side can use any op.
 *
 * Conventions:
 *  - every function returns an int status (0 = success); on failure *err
 *    receives a malloc'd message that the caller releases with tlbo_free;
 *  - every C++ exception is caught inside the library;
 *  - dtypes are c10::ScalarType codes (float32 = 6, float64 = 7, int64 = 4,
 *    bool = 11, int32 = 3, uint8 = 0); device types are 0 = CPU, 1 = CUDA.
 */
#ifndef TLBO_H
#define TLBO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tlbo_tensor_s *tlbo_tensor; /* owns one reference to a tensor */
typedef struct tlbo_op_s *tlbo_op;         /* a resolved operator; never freed */

#define TLBO_MAX_DIMS 16

/* Argument kinds for tlbo_op_call. */
enum {
  TLBO_ARG_NONE = 0,    /* None, for optional arguments */
  TLBO_ARG_TENSOR = 1,  /* tensor (a NULL handle means an undefined tensor) */
  TLBO_ARG_INT = 2,     /* i */
  TLBO_ARG_DOUBLE = 3,  /* d */
  TLBO_ARG_BOOL = 4,    /* i != 0 */
  TLBO_ARG_INTS = 5,    /* ints[0..len) */
  TLBO_ARG_DOUBLES = 6, /* doubles[0..len) */
  TLBO_ARG_TENSORS = 7, /* tensors[0..len); NULL entries are None in optional lists */
  TLBO_ARG_DEVICE = 8,  /* device type i, index i2 (-1: default) */
  TLBO_ARG_STRING = 9   /* str */
};

/* One argument of an operator call; name != NULL binds it by keyword. */
typedef struct {
  int kind;
  const char *name;
  tlbo_tensor tensor;
  int64_t i, i2;
  double d;
  const int64_t *ints;
  const double *doubles;
  const tlbo_tensor *tensors;
  int64_t len;
  const char *str;
} tlbo_arg;

/* Return kinds of tlbo_op_call. */
enum { TLBO_RET_TENSOR = 1, TLBO_RET_INT = 2, TLBO_RET_DOUBLE = 3, TLBO_RET_BOOL = 4, TLBO_RET_NONE = 5 };

/* One returned value; tensor lists are flattened into consecutive entries. */
typedef struct {
  int kind;
  tlbo_tensor tensor;
  int64_t i;
  double d;
} tlbo_ret;

/* Memory. */
void tlbo_free(void *p);
void tlbo_tensor_free(tlbo_tensor t);

/* Runtime. */
int tlbo_version(char **out, char **err); /* malloc'd libtorch version */
int tlbo_cuda_compiled(void);             /* 1 when built against a CUDA libtorch */
int tlbo_cuda_device_count(void);         /* 0 when none is seen */
int tlbo_cuda_synchronize(char **err);
int tlbo_manual_seed(uint64_t seed, char **err);
int tlbo_set_num_threads(int n, char **err);
int tlbo_get_num_threads(void);
/* Whether calls into libtorch flush subnormal floats to zero (on by default): each call sets the
 * calling thread's FTZ and DAZ modes and restores the caller's after it; libtorch's worker threads
 * keep the mode of the call that started them. Returns 1 when the mode is now as asked, 0 when the
 * platform has no such mode (only x86-64 has; elsewhere it stays off). */
int tlbo_set_flush_denormal(int on);
int tlbo_get_flush_denormal(void);
/* Returns the allocator's free pages to the system: tcmalloc's when the program links it
 * (MallocExtension_ReleaseFreeMemory), else those of every glibc malloc arena (malloc_trim);
 * 1 when memory was released, 0 when none was or the allocator has no such call. */
int tlbo_release_free_memory(void);
/* libtorch's operator profiler on the calling thread; stop writes a Chrome trace to path. */
int tlbo_profile_start(const char *path, char **err);
int tlbo_profile_stop(char **err);

/* Tensors. */
int tlbo_tensor_from_data(const void *data, int dtype, const int64_t *shape, int ndim, tlbo_tensor *out,
                          char **err);
int tlbo_tensor_copy_data(tlbo_tensor t, void *dst, int64_t nbytes, char **err); /* t must have the dtype dst expects */
int tlbo_tensor_info(tlbo_tensor t, int *dtype, int *ndim, int64_t *shape, int *device_type, int *device_index,
                     int *requires_grad, char **err);
int tlbo_tensor_to(tlbo_tensor t, int device_type, int device_index, int dtype, int copy, tlbo_tensor *out,
                   char **err);
int tlbo_tensor_set_data(tlbo_tensor dst, tlbo_tensor src, char **err); /* dst.set_data(src): keeps identity */
int tlbo_tensor_set_requires_grad(tlbo_tensor t, int on, char **err);
int tlbo_tensor_grad(tlbo_tensor t, tlbo_tensor *out, char **err); /* *out = NULL when no gradient */
int tlbo_tensor_zero_grad(tlbo_tensor t, char **err);              /* drops the gradient */
int tlbo_tensor_backward(tlbo_tensor t, tlbo_tensor grad, int retain_graph, char **err);

/* Operators. */
int tlbo_op_find(const char *name, const char *overload, tlbo_op *out, char **err);
int tlbo_op_call(tlbo_op op, const tlbo_arg *args, int nargs, int grad_enabled, tlbo_ret **rets, int *nrets,
                 char **err); /* *rets: malloc'd, release with tlbo_free */

/* Serialisation in PyTorch's torch.save zip format: a dict of name -> tensor, as
 * *size bytes at *data (malloc'd, release with tlbo_free); the caller writes them,
 * so that a write error keeps its errno (reading is done in Go: libtorch's
 * unpickler rejects Python's OrderedDict). */
int tlbo_pickle_tensors(const char *const *names, const tlbo_tensor *tensors, int n, char **data, size_t *size,
                        char **err);

#ifdef __cplusplus
}
#endif

#endif /* TLBO_H */
