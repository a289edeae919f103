// Package torch is tlbo-native's Go binding to libtorch, through the small
// plain-C ABI of native/tlbo.h (libtlbo_native.so). It knows nothing of VAEs
// or Bayesian optimisation.
//
// # Tensors and operators
//
// A [Tensor] is a handle to a libtorch tensor. Tensors come from Go slices
// ([FromFloat32], [FromFloat64], [FromInt64], [FromBool]), from factories
// ([Zeros], [Randn], ...) or from operators ([Tensor.Add], [Tensor.MatMul],
// [Cat], [Linear], [CrossEntropyLoss], ...), and go back to Go with
// [Tensor.Float32s], [Tensor.Float64s], [Tensor.Int64s], [Tensor.Bools] and
// [Tensor.Item]. Each operator is an ATen operator called by name through the
// dispatcher, with PyTorch's semantics (broadcasting, type promotion,
// autograd); names follow PyTorch.
//
// # Errors
//
// Operators never panic. A failing operator returns a tensor that carries the
// error, an [*Error] naming the ATen operator (for example
// "torch: aten::matmul: mat1 and mat2 shapes cannot be multiplied"); later
// operators pass it on unchanged, and the first call that leaves the tensor
// world ([Tensor.Err], [Tensor.Backward], [Tensor.Float32s], [Tensor.Item],
// ...) returns it. A chain of operators therefore needs one error check at
// its end.
//
// # Memory
//
// Native memory is released by [Tensor.Close], which is idempotent and safe
// to call from several goroutines (exactly one call frees the handle). A
// [Scope] owns the tensors of, say, one training step: the result of an
// operator joins the scope of its first operand that has one, so scoping a
// step's inputs ([Scope.Own]) scopes everything computed from them, while
// module parameters and factory results stay out. A finalizer frees a
// forgotten tensor as a backstop only: [LiveTensors] counts the handles Go
// holds and [CollectedTensors] those the finalizer had to free, so tests can
// check that code releases what it makes.
//
// Every call that hands a tensor's handle to C keeps that tensor reachable
// until C returns (runtime.KeepAlive), so operators on temporaries are safe
// even when the collector runs during the call. Argument lists are built in
// C memory taken from a bounded free list.
//
// # Gradients and devices
//
// [NoGrad] turns gradient recording off process-wide (goroutines move
// between OS threads, and libtorch keeps its mode per thread, so every
// operator call carries the mode explicitly); do not run a training step
// concurrently with it. Devices are [CPU] and [CUDA]; [ParseDevice] reads
// "auto", "cpu", "cuda" and "cuda:N".
//
// # Checkpoints
//
// [Save] writes named tensors as a .npz file or in torch.save's zip format,
// which Python's torch.load reads. [Load] reads those and files written by
// Python's torch.save (PyTorch 1.6 and later), including the OrderedDict of
// Module.state_dict(), with a pure-Go unpickler; it treats the file as
// untrusted input: a malformed or forged file gives an error, never a panic,
// and what it allocates is bounded by the file's size (a tensor that repeats
// its storage through zero strides may have up to 2^20 elements).
package torch
