//===- Comm.h - The communicator of a data-parallel run --------*- C++ -*-===//
//
// The processes of a data-parallel run (the world: one rank per process)
// and the collectives the executor runs across them on host memory: an
// all_reduce (sum, mean, max, min) of f32, f64, i32 or i64 values, in
// place, blocking or started and waited for later (overlapped with the
// step's kernels), an all_gather, a reduce_scatter, a broadcast and a
// barrier. Two backends:
//
//   self  one process, the world of one: every collective is the identity
//         (a mean over one rank is the value, a gather of one a copy);
//   MPI   Open MPI, loaded with dlopen when the process was started by a
//         launcher (mpirun, srun): Comm.cpp.
//
// openComm picks one: SYNPL_COMM=self forces one process, SYNPL_COMM=mpi
// MPI; otherwise MPI when the environment names a launcher's world
// (OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE), else self. Every failure
// is a one-line message with SYNPL_RT_ERR_COMM (an MPI call's names the
// call and MPI_Error_string). Internal to lib/Runtime (and its tests).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_RUNTIME_COMM_H
#define SYNPL_LIB_RUNTIME_COMM_H

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

namespace synpl::rt {

/// An all_reduce or a reduce_scatter started and not yet complete
/// (Comm::startAllReduce, Comm::startReduceScatter).
struct CommRequest {
  std::vector<void *> handles; ///< MPI: one MPI_Request per chunk
  /// A reduce_scatter's source (size() blocks of `count`); null: an
  /// all_reduce in place on `buf`.
  const void *src = nullptr;
  void *buf = nullptr;
  int64_t count = 0, element = 0, reduce = 0;
  bool active = false;
};

class Comm {
public:
  virtual ~Comm() = default;
  Comm(const Comm &) = delete;
  Comm &operator=(const Comm &) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// "self" or "MPI" (the start line and messages say it).
  virtual const char *backend() const = 0;

  /// In place on `count` elements of the plan element type `element`
  /// (SYNPL_PLAN_F32, F64, I32 or I64) with `reduce` (SYNPL_PLAN_REDUCE_*):
  /// every rank ends with the reduction of every rank's values. A mean is
  /// the sum divided by the world size (integers: truncated).
  int32_t allReduce(void *buf, int64_t count, int64_t element, int64_t reduce);
  /// The same, started: `buf` must stay untouched until wait(req) returns.
  int32_t startAllReduce(void *buf, int64_t count, int64_t element, int64_t reduce,
                         CommRequest &req);
  /// Whether `req` is complete, without blocking (it also drives MPI's
  /// progress: call it between kernels). A complete request still needs
  /// wait (the mean's division happens there).
  int32_t test(CommRequest &req, bool &done);
  /// reduceScatter, started: `src` and `dst` must stay untouched until
  /// wait(req) returns.
  int32_t startReduceScatter(const void *src, void *dst, int64_t count, int64_t element,
                             int64_t reduce, CommRequest &req);
  /// Blocks until `req` is complete; then `buf` holds the result.
  int32_t wait(CommRequest &req);
  /// `dst` (size() x `bytes`) receives every rank's `bytes` at `src`, in
  /// rank order.
  int32_t allGather(const void *src, void *dst, int64_t bytes);
  /// `src` holds size() blocks of `count` elements; rank r receives in `dst`
  /// the reduction of every rank's block r.
  int32_t reduceScatter(const void *src, void *dst, int64_t count, int64_t element,
                        int64_t reduce);
  /// Every rank receives `root`'s `bytes` at `buf`.
  int32_t broadcast(void *buf, int64_t bytes, int root);
  int32_t barrier();

  /// Ends every process of the world (MPI_Abort) with `status`; the self
  /// backend does nothing (the caller exits).
  virtual void abort(int status) { (void)status; }
  /// The normal end (MPI_Finalize, when the runtime initialized MPI); once.
  virtual void finalize() {}

protected:
  Comm(int rank, int size) : rank_(rank), size_(size) {}
  /// The backend's operations; `op` is SUM, MAX or MIN (a mean is a sum).
  virtual int32_t doAllReduce(void *buf, int64_t count, int64_t element, int64_t op) = 0;
  virtual int32_t doStart(CommRequest &req, int64_t op) = 0;
  virtual int32_t doTest(CommRequest &req, bool &done) = 0;
  virtual int32_t doWait(CommRequest &req) = 0;
  virtual int32_t doAllGather(const void *src, void *dst, int64_t bytes) = 0;
  virtual int32_t doReduceScatter(const void *src, void *dst, int64_t count,
                                  int64_t element, int64_t op) = 0;
  virtual int32_t doBroadcast(void *buf, int64_t bytes, int root) = 0;
  virtual int32_t doBarrier() = 0;

private:
  /// Starts `req`: an all_reduce in place on `buf` (`src` null) or a
  /// reduce_scatter of `src` into `buf`.
  int32_t start(const void *src, void *buf, int64_t count, int64_t element, int64_t reduce,
                CommRequest &req);
  /// A mean's division of `count` elements by the world size.
  void divide(void *buf, int64_t count, int64_t element) const;
  int rank_ = 0, size_ = 1;
};

/// Whether `element` is one an all_reduce / reduce_scatter takes.
bool commReducible(int64_t element);

/// The one-process communicator.
std::unique_ptr<Comm> selfComm();
/// Open MPI's MPI_COMM_WORLD: loads the library ($SYNPL_MPI_LIB, else
/// libmpi.so.40, else libmpi.so), initializes MPI (unless the program
/// did), sets MPI_ERRORS_RETURN on the world. A missing library is an
/// error naming what was tried and the packages to install.
int32_t openMpiComm(std::unique_ptr<Comm> &out);
/// The process's communicator: SYNPL_COMM (self, mpi), else MPI when a
/// launcher started the process, else self.
int32_t openComm(std::unique_ptr<Comm> &out);
/// The launcher's rank and world size from the environment (before MPI is
/// up, for messages): false when no launcher's variables are set.
bool launcherWorld(int &rank, int &size);
/// The first of `vars` set to an integer in [0, INT_MAX] (launchers name
/// the same thing differently: Open MPI, MPICH, PMIx, Slurm).
bool launcherInteger(std::initializer_list<const char *> vars, int &out);

} // namespace synpl::rt

#endif // SYNPL_LIB_RUNTIME_COMM_H
