// tlbo.cpp: implementation of the C ABI in tlbo.h over libtorch.
//
// Every entry point converts C++ exceptions into a status and a malloc'd
// error string, so no exception ever crosses into Go.

#include "tlbo.h"

#include <torch/csrc/api/include/torch/serialize.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>  // malloc_trim
#endif
#include <dlfcn.h>  // dlsym: tcmalloc's release, when the program links it
#if defined(__x86_64__)
#include <xmmintrin.h>  // _mm_getcsr, _mm_setcsr
#define TLBO_HAS_MXCSR 1  // FTZ and DAZ modes that FlushDenormalScope sets
#endif

struct tlbo_tensor_s {
  at::Tensor t;
};

struct tlbo_op_s {
  c10::OperatorHandle handle;
  std::string name;
};

namespace {

char *copy_string(const std::string &s) {
  char *p = static_cast<char *>(std::malloc(s.size() + 1));
  if (p != nullptr) std::memcpy(p, s.c_str(), s.size() + 1);
  return p;
}

#ifdef TLBO_HAS_MXCSR
constexpr bool can_flush = true;
#else
constexpr bool can_flush = false;
#endif

// flush_denormal: whether libtorch's work flushes subnormal floats to zero
// (tlbo_set_flush_denormal); on by default where the platform can.
std::atomic<bool> flush_denormal{can_flush};

// FlushDenormalScope sets the calling thread's flush-to-zero and
// denormals-are-zero modes (MXCSR's FTZ and DAZ bits, as
// torch.set_flush_denormal does) for one call into libtorch, and restores the
// caller's modes after it, so that Go's own arithmetic keeps IEEE subnormals.
// Subnormal activations and gradients take a slow microcode path on x86:
// training steps of the shipped soft-triplet JT-VAE took twice as long with
// them (docs/experiment section 3).
// Worker threads libtorch starts inside a call inherit the modes and keep them.
class FlushDenormalScope {
 public:
  FlushDenormalScope() {
#ifdef TLBO_HAS_MXCSR
    if (!flush_denormal.load(std::memory_order_relaxed)) return;
    saved_ = _mm_getcsr();
    const unsigned int want = saved_ | kFlushToZero | kDenormalsAreZero;
    if (want != saved_) {
      _mm_setcsr(want);
      restore_ = true;
    }
#endif
  }
  ~FlushDenormalScope() {
#ifdef TLBO_HAS_MXCSR
    if (restore_) _mm_setcsr(saved_);
#endif
  }
  FlushDenormalScope(const FlushDenormalScope &) = delete;
  FlushDenormalScope &operator=(const FlushDenormalScope &) = delete;

 private:
  static constexpr unsigned int kFlushToZero = 0x8000, kDenormalsAreZero = 0x0040;
  unsigned int saved_ = 0;
  bool restore_ = false;
};

// wanted_threads is libtorch's intra-op thread count as last set through
// tlbo_set_num_threads (0: never set, libtorch's default). With OpenMP,
// at::set_num_threads sets the count of the calling OS thread only (its
// omp_set_num_threads), and an OS thread that already ran parallel work keeps
// the count it had then. Go runs each call on whichever OS thread the
// goroutine is on, so every call applies the wanted count to its own thread
// first: otherwise `--threads 1` held for some calls and not others, and a
// resumed training could round differently from the uninterrupted one
// (issue 49: found under OMP_NUM_THREADS=2).
std::atomic<int> wanted_threads{0};
thread_local int applied_threads = 0;

void sync_num_threads() {
  const int want = wanted_threads.load(std::memory_order_relaxed);
  if (want > 0 && applied_threads != want) {
    at::set_num_threads(want);
    applied_threads = want;
  }
}

// guarded runs fn under FlushDenormalScope, on the thread count of
// tlbo_set_num_threads, and turns any exception into status 1 and *err.
template <typename F>
int guarded(char **err, F &&fn) {
  FlushDenormalScope denormals;
  sync_num_threads();
  try {
    fn();
    return 0;
  } catch (const c10::Error &e) {
    if (err != nullptr) *err = copy_string(e.what_without_backtrace());
  } catch (const std::exception &e) {
    if (err != nullptr) *err = copy_string(e.what());
  } catch (...) {
    if (err != nullptr) *err = copy_string("unknown C++ exception");
  }
  return 1;
}

tlbo_tensor wrap(at::Tensor t) { return new tlbo_tensor_s{std::move(t)}; }

const at::Tensor &unwrap(tlbo_tensor h) {
  if (h == nullptr) throw std::invalid_argument("null tensor handle");
  return h->t;
}

c10::Device make_device(int type, int index) {
  switch (type) {
    case 0:
      return c10::Device(c10::DeviceType::CPU);
    case 1:
      return c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index));
    default:
      throw std::invalid_argument("unknown device type " + std::to_string(type));
  }
}

c10::ScalarType checked_dtype(int code) {
  switch (code) {
    case 0: case 3: case 4: case 6: case 7: case 11:
      return static_cast<c10::ScalarType>(code);
    default:
      throw std::invalid_argument("unsupported dtype code " + std::to_string(code));
  }
}

// to_ivalue converts one C argument to the IValue the schema's type expects.
c10::IValue to_ivalue(const tlbo_arg &a, const c10::Argument &formal) {
  c10::TypePtr type = formal.type();
  if (a.kind == TLBO_ARG_NONE) return c10::IValue();
  if (type->kind() == c10::TypeKind::OptionalType) {
    type = type->expectRef<c10::OptionalType>().getElementType();
  }
  switch (a.kind) {
    case TLBO_ARG_TENSOR:
      if (a.tensor == nullptr) return c10::IValue();
      return c10::IValue(a.tensor->t);
    case TLBO_ARG_INT:
      if (type->kind() == c10::TypeKind::FloatType) return c10::IValue(static_cast<double>(a.i));
      return c10::IValue(a.i);
    case TLBO_ARG_DOUBLE:
      if (type->kind() == c10::TypeKind::IntType) {
        throw std::invalid_argument("argument '" + formal.name() + "' must be an integer");
      }
      return c10::IValue(a.d);
    case TLBO_ARG_BOOL:
      return c10::IValue(a.i != 0);
    case TLBO_ARG_INTS:
      if (type->kind() == c10::TypeKind::ListType &&
          type->expectRef<c10::ListType>().getElementType()->kind() == c10::TypeKind::FloatType) {
        return c10::IValue(std::vector<double>(a.ints, a.ints + a.len));
      }
      return c10::IValue(std::vector<int64_t>(a.ints, a.ints + a.len));
    case TLBO_ARG_DOUBLES:
      return c10::IValue(std::vector<double>(a.doubles, a.doubles + a.len));
    case TLBO_ARG_TENSORS: {
      bool optional_elems = type->kind() == c10::TypeKind::ListType &&
                            type->expectRef<c10::ListType>().getElementType()->kind() ==
                                c10::TypeKind::OptionalType;
      if (optional_elems) {
        c10::List<c10::optional<at::Tensor>> list;
        for (int64_t k = 0; k < a.len; ++k) {
          if (a.tensors[k] == nullptr) {
            list.push_back(c10::nullopt);
          } else {
            list.push_back(a.tensors[k]->t);
          }
        }
        return c10::IValue(list);
      }
      c10::List<at::Tensor> list;
      for (int64_t k = 0; k < a.len; ++k) list.push_back(unwrap(a.tensors[k]));
      return c10::IValue(list);
    }
    case TLBO_ARG_DEVICE:
      return c10::IValue(make_device(static_cast<int>(a.i), static_cast<int>(a.i2)));
    case TLBO_ARG_STRING:
      return c10::IValue(std::string(a.str == nullptr ? "" : a.str));
    default:
      throw std::invalid_argument("unknown argument kind " + std::to_string(a.kind));
  }
}

// build_stack lays the arguments out in schema order, filling defaults.
std::vector<c10::IValue> build_stack(const c10::FunctionSchema &schema, const tlbo_arg *args, int nargs) {
  const auto &formals = schema.arguments();
  std::vector<c10::IValue> stack(formals.size());
  std::vector<bool> set(formals.size(), false);
  size_t positional = 0;
  for (int k = 0; k < nargs; ++k) {
    size_t idx;
    if (args[k].name != nullptr) {
      auto found = schema.argumentIndexWithName(args[k].name);
      if (!found) throw std::invalid_argument(std::string("no argument named '") + args[k].name + "'");
      idx = static_cast<size_t>(*found);
    } else {
      idx = positional++;
      if (idx >= formals.size()) {
        throw std::invalid_argument("too many arguments: the schema takes " + std::to_string(formals.size()));
      }
    }
    stack[idx] = to_ivalue(args[k], formals[idx]);
    set[idx] = true;
  }
  for (size_t idx = 0; idx < formals.size(); ++idx) {
    if (set[idx]) continue;
    if (!formals[idx].default_value()) {
      throw std::invalid_argument("missing argument '" + formals[idx].name() + "'");
    }
    stack[idx] = *formals[idx].default_value();
  }
  return stack;
}

void append_return(const c10::IValue &v, std::vector<tlbo_ret> &out) {
  tlbo_ret r{};
  if (v.isTensor()) {
    const at::Tensor &t = v.toTensor();
    r.kind = t.defined() ? TLBO_RET_TENSOR : TLBO_RET_NONE;
    if (t.defined()) r.tensor = wrap(t);
  } else if (v.isTensorList()) {
    for (const at::Tensor &t : v.toTensorVector()) append_return(c10::IValue(t), out);
    return;
  } else if (v.isBool()) {
    r.kind = TLBO_RET_BOOL;
    r.i = v.toBool();
  } else if (v.isInt()) {
    r.kind = TLBO_RET_INT;
    r.i = v.toInt();
  } else if (v.isDouble()) {
    r.kind = TLBO_RET_DOUBLE;
    r.d = v.toDouble();
  } else if (v.isNone()) {
    r.kind = TLBO_RET_NONE;
  } else {
    throw std::runtime_error("unsupported return type " + v.tagKind());
  }
  out.push_back(r);
}

void free_returns(std::vector<tlbo_ret> &rets) {
  for (auto &r : rets) delete r.tensor;
}

}  // namespace

extern "C" {

void tlbo_free(void *p) { std::free(p); }

void tlbo_tensor_free(tlbo_tensor t) { delete t; }

int tlbo_version(char **out, char **err) {
  return guarded(err, [&] {
    std::ostringstream s;
    s << TORCH_VERSION_MAJOR << "." << TORCH_VERSION_MINOR << "." << TORCH_VERSION_PATCH;
    *out = copy_string(s.str());
  });
}

int tlbo_cuda_compiled(void) {
#ifdef TLBO_WITH_CUDA
  return 1;
#else
  return 0;
#endif
}

int tlbo_cuda_device_count(void) {
  try {
    return static_cast<int>(torch::cuda::device_count());
  } catch (...) {
    return 0;
  }
}

int tlbo_cuda_synchronize(char **err) {
  return guarded(err, [&] {
    if (torch::cuda::device_count() > 0) torch::cuda::synchronize();
  });
}

int tlbo_manual_seed(uint64_t seed, char **err) {
  return guarded(err, [&] { torch::manual_seed(seed); });
}

int tlbo_set_num_threads(int n, char **err) {
  return guarded(err, [&] {
    if (n < 1) throw std::invalid_argument("number of threads must be at least 1");
    wanted_threads.store(n, std::memory_order_relaxed);
    sync_num_threads();
  });
}

int tlbo_get_num_threads(void) {
  sync_num_threads();
  return at::get_num_threads();
}

int tlbo_set_flush_denormal(int on) {
  flush_denormal.store(can_flush && on != 0, std::memory_order_relaxed);
  return can_flush || on == 0;
}

int tlbo_get_flush_denormal(void) { return flush_denormal.load(std::memory_order_relaxed) ? 1 : 0; }

namespace {
namespace prof = torch::autograd::profiler;

// The path of the profile in progress ("" when none). The legacy profiler
// records on the thread that enabled it and on the autograd threads it
// starts; shapes are recorded so that a trace tells apart the calls of one
// operator.
std::mutex profile_mu;
std::string profile_path;

std::string json_escape(const char *s) {
  std::string out;
  for (; *s != 0; ++s) {
    if (*s == '"' || *s == '\\') out += '\\';
    if (static_cast<unsigned char>(*s) >= 0x20) out += *s;
  }
  return out;
}

std::string shapes_string(const std::vector<std::vector<int64_t>> &shapes) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < shapes.size(); ++i) {
    out << (i ? ", [" : "[");
    for (size_t j = 0; j < shapes[i].size(); ++j) out << (j ? ", " : "") << shapes[i][j];
    out << ']';
  }
  out << ']';
  return out.str();
}

// write_trace writes the recorded ranges as complete Chrome trace events,
// pairing each push with the pop of the same handle.
void write_trace(const std::string &path, const prof::thread_event_lists &lists) {
  const prof::LegacyEvent *origin = nullptr;
  std::unordered_map<uint64_t, const prof::LegacyEvent *> pops;
  for (const auto &list : lists) {
    for (const auto &e : list) {
      if (origin == nullptr || e.cpuUs() < origin->cpuUs()) origin = &e;
      if (e.kind() == prof::EventKind::PopRange) pops[e.handle()] = &e;
    }
  }
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << std::fixed << std::setprecision(3) << "[";
  bool first = true;
  for (const auto &list : lists) {
    for (const auto &e : list) {
      auto pop = pops.find(e.handle());
      if (e.kind() != prof::EventKind::PushRange || pop == pops.end()) continue;
      out << (first ? "\n" : ",\n") << "{\"name\": \"" << json_escape(e.name()) << "\", \"ph\": \"X\", \"ts\": "
          << origin->cpuElapsedUs(e) << ", \"dur\": " << e.cpuElapsedUs(*pop->second) << ", \"tid\": " << e.threadId()
          << ", \"pid\": 0, \"args\": {\"shapes\": \"" << shapes_string(e.shapes()) << "\"}}";
      first = false;
    }
  }
  out << "\n]\n";
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path);
}
}  // namespace

namespace {
// tcmalloc_release hands tcmalloc's free pages back when the program links
// tcmalloc (gperftools' C API, looked up so that this library needs none):
// -1 without it, else 1 when it held free pages.
int tcmalloc_release() {
  using numeric_fn = int (*)(const char *, size_t *);
  using release_fn = void (*)();
  // Looked up once: the program's link does not change.
  static const auto get = reinterpret_cast<numeric_fn>(dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty"));
  static const auto release = reinterpret_cast<release_fn>(dlsym(RTLD_DEFAULT, "MallocExtension_ReleaseFreeMemory"));
  if (get == nullptr || release == nullptr) return -1;
  size_t free_bytes = 0;
  get("tcmalloc.pageheap_free_bytes", &free_bytes);
  release();
  return free_bytes > 0 ? 1 : 0;
}
}  // namespace

int tlbo_release_free_memory(void) {
  int released = tcmalloc_release();
  if (released >= 0) return released;
#if defined(__GLIBC__)
  return malloc_trim(0);
#else
  return 0;
#endif
}

int tlbo_profile_start(const char *path, char **err) {
  return guarded(err, [&] {
    std::lock_guard<std::mutex> lock(profile_mu);
    if (!profile_path.empty()) throw std::runtime_error("a profile is already being recorded");
    if (path == nullptr || *path == 0) throw std::invalid_argument("empty profile path");
    prof::enableProfilerLegacy(torch::profiler::impl::ProfilerConfig(torch::profiler::impl::ProfilerState::CPU, true));
    profile_path = path;
  });
}

int tlbo_profile_stop(char **err) {
  return guarded(err, [&] {
    std::lock_guard<std::mutex> lock(profile_mu);
    if (profile_path.empty()) throw std::runtime_error("no profile is being recorded");
    std::string path = profile_path;
    profile_path.clear();
    write_trace(path, prof::disableProfilerLegacy());
  });
}

int tlbo_tensor_from_data(const void *data, int dtype, const int64_t *shape, int ndim, tlbo_tensor *out,
                          char **err) {
  return guarded(err, [&] {
    if (ndim < 0 || ndim > TLBO_MAX_DIMS) throw std::invalid_argument("bad number of dimensions");
    std::vector<int64_t> sizes(shape, shape + ndim);
    auto opts = at::TensorOptions().dtype(checked_dtype(dtype));
    at::Tensor t = at::empty(sizes, opts);
    if (t.numel() > 0) std::memcpy(t.data_ptr(), data, t.numel() * t.element_size());
    *out = wrap(std::move(t));
  });
}

int tlbo_tensor_copy_data(tlbo_tensor h, void *dst, int64_t nbytes, char **err) {
  return guarded(err, [&] {
    at::Tensor t = unwrap(h).detach().to(at::kCPU).contiguous();
    int64_t have = t.numel() * static_cast<int64_t>(t.element_size());
    if (have != nbytes) {
      throw std::invalid_argument("buffer holds " + std::to_string(nbytes) + " bytes, tensor has " +
                                  std::to_string(have));
    }
    if (have > 0) std::memcpy(dst, t.data_ptr(), have);
  });
}

int tlbo_tensor_info(tlbo_tensor h, int *dtype, int *ndim, int64_t *shape, int *device_type, int *device_index,
                     int *requires_grad, char **err) {
  return guarded(err, [&] {
    const at::Tensor &t = unwrap(h);
    if (!t.defined()) throw std::invalid_argument("undefined tensor");
    if (t.dim() > TLBO_MAX_DIMS) throw std::invalid_argument("tensor has too many dimensions");
    *dtype = static_cast<int>(t.scalar_type());
    *ndim = static_cast<int>(t.dim());
    for (int64_t k = 0; k < t.dim(); ++k) shape[k] = t.size(k);
    *device_type = t.device().is_cuda() ? 1 : 0;
    *device_index = t.device().has_index() ? t.device().index() : -1;
    *requires_grad = t.requires_grad() ? 1 : 0;
  });
}

int tlbo_tensor_to(tlbo_tensor h, int device_type, int device_index, int dtype, int copy, tlbo_tensor *out,
                   char **err) {
  return guarded(err, [&] {
    const at::Tensor &t = unwrap(h);
    c10::ScalarType st = dtype < 0 ? t.scalar_type() : checked_dtype(dtype);
    *out = wrap(t.to(make_device(device_type, device_index), st, /*non_blocking=*/false, copy != 0));
  });
}

int tlbo_tensor_set_data(tlbo_tensor dst, tlbo_tensor src, char **err) {
  return guarded(err, [&] {
    at::Tensor d = unwrap(dst);
    d.set_data(unwrap(src));
  });
}

int tlbo_tensor_set_requires_grad(tlbo_tensor h, int on, char **err) {
  return guarded(err, [&] {
    at::Tensor t = unwrap(h);
    t.set_requires_grad(on != 0);
  });
}

int tlbo_tensor_grad(tlbo_tensor h, tlbo_tensor *out, char **err) {
  return guarded(err, [&] {
    const at::Tensor &g = unwrap(h).grad();
    *out = g.defined() ? wrap(g) : nullptr;
  });
}

int tlbo_tensor_zero_grad(tlbo_tensor h, char **err) {
  return guarded(err, [&] {
    at::Tensor t = unwrap(h);
    t.mutable_grad() = at::Tensor();
  });
}

int tlbo_tensor_backward(tlbo_tensor h, tlbo_tensor grad, int retain_graph, char **err) {
  return guarded(err, [&] {
    at::Tensor g = grad == nullptr ? at::Tensor() : unwrap(grad);
    unwrap(h).backward(g, retain_graph != 0);
  });
}

int tlbo_op_find(const char *name, const char *overload, tlbo_op *out, char **err) {
  static std::mutex mu;
  static std::unordered_map<std::string, tlbo_op> cache;
  return guarded(err, [&] {
    std::string key = std::string(name) + "." + overload;
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it == cache.end()) {
      auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
      it = cache.emplace(key, new tlbo_op_s{handle, key}).first;
    }
    *out = it->second;
  });
}

int tlbo_op_call(tlbo_op op, const tlbo_arg *args, int nargs, int grad_enabled, tlbo_ret **rets, int *nrets,
                 char **err) {
  std::vector<tlbo_ret> out;
  int status = guarded(err, [&] {
    if (op == nullptr) throw std::invalid_argument("null operator");
    std::vector<c10::IValue> stack = build_stack(op->handle.schema(), args, nargs);
    {
      at::AutoGradMode mode(grad_enabled != 0);
      op->handle.callBoxed(&stack);
    }
    for (const auto &v : stack) append_return(v, out);
    *rets = static_cast<tlbo_ret *>(std::malloc(sizeof(tlbo_ret) * (out.empty() ? 1 : out.size())));
    if (*rets == nullptr) throw std::bad_alloc();
    std::copy(out.begin(), out.end(), *rets);
    *nrets = static_cast<int>(out.size());
  });
  if (status != 0) {
    free_returns(out);
    *rets = nullptr;
    *nrets = 0;
  }
  return status;
}

int tlbo_pickle_tensors(const char *const *names, const tlbo_tensor *tensors, int n, char **data, size_t *size,
                        char **err) {
  *data = nullptr;
  *size = 0;
  return guarded(err, [&] {
    c10::Dict<std::string, at::Tensor> dict;
    for (int k = 0; k < n; ++k) {
      if (dict.contains(names[k])) throw std::invalid_argument(std::string("duplicate name ") + names[k]);
      dict.insert(names[k], unwrap(tensors[k]).detach().to(at::kCPU).contiguous());
    }
    std::vector<char> bytes = torch::pickle_save(c10::IValue(dict));
    char *out = static_cast<char *>(std::malloc(bytes.empty() ? 1 : bytes.size()));
    if (out == nullptr) throw std::bad_alloc();
    std::copy(bytes.begin(), bytes.end(), out);
    *data = out;
    *size = bytes.size();
  });
}

}  // extern "C"
