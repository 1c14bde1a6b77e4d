//===- Mpi.h - The MPI subset the runtime calls, Open MPI's ABI -*- C++ -*-===//
//
// Declared by hand (no mpi.h at build time), as CudaDriver.h declares the
// CUDA driver: the runtime loads Open MPI's libmpi with dlopen and binds
// these with dlsym, so a compiled program builds and starts on a machine
// without MPI and needs it only when mpirun (or srun) starts it.
//
// Open MPI's ABI (checked against Open MPI 4.1's mpi.h): every handle is a
// pointer, and a predefined handle is the address of a global object of
// the library (MPI_COMM_WORLD is &ompi_mpi_comm_world, MPI_FLOAT is
// &ompi_mpi_float, MPI_SUM is &ompi_mpi_op_sum, ...), so the runtime reads
// them with dlsym as well. MPI_IN_PLACE is (void *)1; MPI_STATUS_IGNORE is
// null; MPI_SUCCESS is 0. MPICH's ABI (integer handles) is another: these
// declarations are Open MPI's only (Comm.cpp says so when a library lacks
// the symbols).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_RUNTIME_MPI_H
#define SYNPL_LIB_RUNTIME_MPI_H

extern "C" {

typedef struct ompi_communicator_t *MPI_Comm;
typedef struct ompi_datatype_t *MPI_Datatype;
typedef struct ompi_errhandler_t *MPI_Errhandler;
typedef struct ompi_op_t *MPI_Op;
typedef struct ompi_request_t *MPI_Request;
typedef struct ompi_status_public_t MPI_Status;

} // extern "C"

namespace synpl::rt::mpi {

constexpr int SUCCESS = 0;
constexpr int THREAD_FUNNELED = 1; // MPI_THREAD_SINGLE is 0
constexpr int MAX_ERROR_STRING = 256;
inline void *inPlace() { return reinterpret_cast<void *>(1); }

} // namespace synpl::rt::mpi

/// The entry points: X(member, symbol, return type, parameters).
#define SYNPL_MPI_FUNCTIONS(X)                                                 \
  X(Init_thread, "MPI_Init_thread", int, (int *, char ***, int, int *))        \
  X(Initialized, "MPI_Initialized", int, (int *))                              \
  X(Finalized, "MPI_Finalized", int, (int *))                                  \
  X(Finalize, "MPI_Finalize", int, ())                                         \
  X(Comm_rank, "MPI_Comm_rank", int, (MPI_Comm, int *))                        \
  X(Comm_size, "MPI_Comm_size", int, (MPI_Comm, int *))                        \
  X(Comm_set_errhandler, "MPI_Comm_set_errhandler", int,                       \
    (MPI_Comm, MPI_Errhandler))                                                \
  X(Allreduce, "MPI_Allreduce", int,                                           \
    (const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm))               \
  X(Iallreduce, "MPI_Iallreduce", int,                                         \
    (const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request *)) \
  X(Wait, "MPI_Wait", int, (MPI_Request *, MPI_Status *))                      \
  X(Test, "MPI_Test", int, (MPI_Request *, int *, MPI_Status *))               \
  X(Allgather, "MPI_Allgather", int,                                           \
    (const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm))    \
  X(Reduce_scatter_block, "MPI_Reduce_scatter_block", int,                     \
    (const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm))               \
  X(Ireduce_scatter_block, "MPI_Ireduce_scatter_block", int,                   \
    (const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request *)) \
  X(Bcast, "MPI_Bcast", int, (void *, int, MPI_Datatype, int, MPI_Comm))       \
  X(Barrier, "MPI_Barrier", int, (MPI_Comm))                                   \
  X(Abort, "MPI_Abort", int, (MPI_Comm, int))                                  \
  X(Error_string, "MPI_Error_string", int, (int, char *, int *))

/// The predefined handles: X(member, symbol of the global object, type).
#define SYNPL_MPI_HANDLES(X)                                                   \
  X(commWorld, "ompi_mpi_comm_world", MPI_Comm)                                \
  X(typeFloat, "ompi_mpi_float", MPI_Datatype)                                 \
  X(typeDouble, "ompi_mpi_double", MPI_Datatype)                               \
  X(typeInt32, "ompi_mpi_int32_t", MPI_Datatype)                               \
  X(typeInt64, "ompi_mpi_int64_t", MPI_Datatype)                               \
  X(typeByte, "ompi_mpi_byte", MPI_Datatype)                                   \
  X(opSum, "ompi_mpi_op_sum", MPI_Op)                                          \
  X(opMax, "ompi_mpi_op_max", MPI_Op)                                          \
  X(opMin, "ompi_mpi_op_min", MPI_Op)                                          \
  X(errorsReturn, "ompi_mpi_errors_return", MPI_Errhandler)

#endif // SYNPL_LIB_RUNTIME_MPI_H
