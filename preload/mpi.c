/* SPDX-License-Identifier: MIT */
/* MPI calls as regions: each wrapper records its call and the bytes moved, then calls PMPI_*. */
#define _GNU_SOURCE
#include "libcall.h"
#include "state.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>

/*
 * The library neither links libmpi nor includes <mpi.h>, so one build
 * serves both ABIs in use:
 *
 *   handle (datatype, comm, op)   Open MPI: a pointer   MPICH: a 32-bit int
 *   MPI_COMM_WORLD                &ompi_mpi_comm_world  0x44000000
 *   MPI_STATUS_IGNORE             (MPI_Status *)0       (MPI_Status *)1
 *   MPI_IN_PLACE                  (void *)1             (void *)-1
 *   MPI_PROC_NULL                 -2                    -1
 *
 * Handles are taken as pointer-sized integers and passed on untouched: an
 * int in a 64-bit register reaches PMPI_* as the same int. Requests and
 * statuses are only ever passed on by address.
 */
typedef uintptr_t mpi_handle;

#define MPI_OK 0 /* MPI_SUCCESS in both */

/* Large enough for either implementation's MPI_Status (24 and 20 bytes). */
struct own_status {
	_Alignas(64) unsigned char bytes[64];
};

static SCOPE_NOINST int status_ignored(const void *status)
{
	return (uintptr_t)status <= 1;
}

static SCOPE_NOINST int in_place(const void *buf)
{
	return buf == (const void *)1 || buf == (const void *)-1;
}

/* ---------------------------------------------------------------------- */
/* Finding PMPI_*                                                          */

struct objects {
	const char *name[256];
	size_t n;
};

static SCOPE_NOINST int note_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct objects *o = arg;
	(void)size;
	if (info->dlpi_name && info->dlpi_name[0] && o->n < sizeof o->name / sizeof *o->name)
		o->name[o->n++] = info->dlpi_name;
	return 0;
}

/* Whether addr lies in this library: a PMPI_* found there would be one of
 * our own wrappers, and calling it would never end. */
static SCOPE_NOINST int ours(void *addr)
{
	Dl_info self, found;
	return dladdr((void *)&ours, &self) && dladdr(addr, &found) &&
	       self.dli_fbase == found.dli_fbase;
}

/*
 * A function of libmpi: after this library in the search order, else
 * anywhere global, else in an object loaded with RTLD_LOCAL (a Python
 * extension that links libmpi, say), whose calls to MPI_* still reach us.
 * A variable is looked up globally first: a program that uses it may hold
 * the copy everyone uses (a copy relocation), and libmpi's own is then
 * stale. The objects are listed first and opened after: dlopen must not
 * run under dl_iterate_phdr's lock.
 */
static SCOPE_NOINST void *mpi_symbol(const char *name, int variable)
{
	struct objects o = {.n = 0};
	void *addr = dlsym(variable ? RTLD_DEFAULT : RTLD_NEXT, name);

	if (!addr || ours(addr))
		addr = dlsym(RTLD_DEFAULT, name);
	if (addr && !ours(addr))
		return addr;
	dl_iterate_phdr(note_object, &o);
	for (size_t i = 0; i < o.n; i++) {
		/* kept open: the functions found stay in use */
		void *h = dlopen(o.name[i], RTLD_LAZY | RTLD_NOLOAD);
		if (h && (addr = dlsym(h, name)) != NULL && !ours(addr))
			return addr;
	}
	return NULL;
}

/* What a slot holds once its function was looked up in vain. */
static const char absent;

/*
 * The function behind a wrapper, looked up once: PMPI_name, else the next
 * MPI_name (a serial stub library that defines MPI_* without PMPI_*).
 * Without either the call cannot be made at all: say so and stop, rather
 * than return as if it had been. A function the wrappers only use to count
 * bytes (required = 0) may be missing: it gives NULL, and no bytes.
 */
static SCOPE_NOINST __attribute__((noinline)) void *pmpi_resolve(void **slot, const char *name,
								 int required)
{
	void *fn = mpi_symbol(name, 0);

	if (!fn)
		fn = mpi_symbol(name + 1, 0);
	if (!fn && required) {
		scope_log("the program calls %s but neither %s nor another %s is in a loaded "
			  "library, so the call cannot be passed on; aborting",
			  name + 1, name, name + 1);
		abort();
	}
	__atomic_store_n(slot, fn ? fn : (void *)&absent, __ATOMIC_RELEASE);
	return fn;
}

static inline __attribute__((always_inline)) void *pmpi(void **slot, const char *name, int required)
{
	void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!fn)
		return pmpi_resolve(slot, name, required);
	return fn == (void *)&absent ? NULL : fn;
}

/* The function a wrapper passes its call on to. */
#define REAL(name) ((name##_fn)pmpi(&real_##name, "P" #name, 1))
/* One used to count bytes, or NULL. */
#define HELPER(name) ((name##_fn)pmpi(&real_##name, "P" #name, 0))

/* A PMPI_* function this file calls. */
#define PMPI_FN(name, params)                                                                      \
	typedef int(*name##_fn) params;                                                            \
	static void *real_##name;

/* A wrapper: its PMPI_* function, and a hidden alias whose address is
 * surely this library's MPI_name (the exported name may be bound to
 * libmpi's in some lookups); the symbolizer names it by the global name. */
#define MPI_WRAPPER(name, params)                                                                  \
	PMPI_FN(name, params)                                                                      \
	SCOPE_EXPORT int name params;                                                              \
	SCOPE_HIDDEN int self_##name params __attribute__((alias(#name)));

PMPI_FN(MPI_Type_size, (mpi_handle type, int *size))
PMPI_FN(MPI_Get_count, (const void *status, mpi_handle type, int *count))
PMPI_FN(MPI_Comm_rank, (mpi_handle comm, int *rank))
PMPI_FN(MPI_Comm_size, (mpi_handle comm, int *size))

/* What differs between the two ABIs and cannot be told from the value. */
struct mpi_abi {
	mpi_handle comm_world;
	int proc_null; /* MPI_ANY_SOURCE is the other one of -1 and -2 */
};

static struct mpi_abi abi;
static pthread_once_t abi_once = PTHREAD_ONCE_INIT;

/* Open MPI when its world communicator is a symbol, else MPICH's ABI. */
static SCOPE_NOINST void abi_detect(void)
{
	void *ompi = mpi_symbol("ompi_mpi_comm_world", 1);
	abi.comm_world = ompi ? (mpi_handle)ompi : (mpi_handle)0x44000000;
	abi.proc_null = ompi ? -2 : -1;
}

static SCOPE_NOINST const struct mpi_abi *mpi_abi(void)
{
	pthread_once(&abi_once, abi_detect);
	return &abi;
}

/* ---------------------------------------------------------------------- */
/* Counting bytes                                                          */

static SCOPE_NOINST uint64_t type_bytes(int64_t count, mpi_handle type)
{
	MPI_Type_size_fn type_size = HELPER(MPI_Type_size);
	int size = 0;

	if (count <= 0 || !type_size || type_size(type, &size) != MPI_OK || size <= 0)
		return 0;
	return (uint64_t)count * (uint64_t)size;
}

/* What a completed receive brought: its element count (MPI_UNDEFINED, a
 * negative, when it is not a whole number of elements: counted 0). */
static SCOPE_NOINST uint64_t received_bytes(const void *status, mpi_handle type)
{
	MPI_Get_count_fn get_count = HELPER(MPI_Get_count);
	int count = 0;

	if (!get_count || get_count(status, type, &count) != MPI_OK)
		return 0;
	return type_bytes(count, type);
}

static SCOPE_NOINST int comm_size(mpi_handle comm)
{
	MPI_Comm_size_fn size = HELPER(MPI_Comm_size);
	int n = 0;
	return size && size(comm, &n) == MPI_OK ? n : 0;
}

static SCOPE_NOINST int comm_rank(mpi_handle comm)
{
	MPI_Comm_rank_fn rank = HELPER(MPI_Comm_rank);
	int r = -1;
	return rank && rank(comm, &r) == MPI_OK ? r : -1;
}

static SCOPE_NOINST int64_t sum_counts(const int *counts, int n)
{
	int64_t s = 0;
	for (int i = 0; counts && i < n; i++)
		s += counts[i] > 0 ? counts[i] : 0;
	return s;
}

/* ---------------------------------------------------------------------- */
/* A call as a region                                                      */

/* Inlined, so that both hooks see the wrapper's own frame. */
static inline __attribute__((always_inline)) void call_begin(void *self)
{
	scope_libcall_begin(self);
}

static inline __attribute__((always_inline)) void call_end(void *self, uint64_t sent,
							   uint64_t received)
{
	scope_record_bytes(self, sent, received);
	__cyg_profile_func_exit(self, __builtin_return_address(0));
}

/* ---------------------------------------------------------------------- */
/* Start and end                                                           */

MPI_WRAPPER(MPI_Init, (int *argc, char ***argv))
MPI_WRAPPER(MPI_Init_thread, (int *argc, char ***argv, int required, int *provided))
MPI_WRAPPER(MPI_Finalize, (void))

/* The rank the launcher's environment gave (or none, when it gave none)
 * is MPI's own from here on. */
static SCOPE_NOINST void confirm_rank(void)
{
	struct scope_arena_header *h = scope_proc.hdr;
	mpi_handle world = mpi_abi()->comm_world;
	int rank = comm_rank(world), size = comm_size(world);

	if (!h || rank < 0)
		return;
	if (h->rank != rank)
		__atomic_store_n(&h->rank, rank, __ATOMIC_RELAXED);
	if (size > 0 && h->ranks != size)
		__atomic_store_n(&h->ranks, size, __ATOMIC_RELAXED);
}

int MPI_Init(int *argc, char ***argv)
{
	int rc;
	call_begin((void *)self_MPI_Init);
	rc = REAL(MPI_Init)(argc, argv);
	if (rc == MPI_OK)
		confirm_rank();
	call_end((void *)self_MPI_Init, 0, 0);
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc;
	call_begin((void *)self_MPI_Init_thread);
	rc = REAL(MPI_Init_thread)(argc, argv, required, provided);
	if (rc == MPI_OK)
		confirm_rank();
	call_end((void *)self_MPI_Init_thread, 0, 0);
	return rc;
}

int MPI_Finalize(void)
{
	int rc;
	call_begin((void *)self_MPI_Finalize);
	rc = REAL(MPI_Finalize)();
	call_end((void *)self_MPI_Finalize, 0, 0);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Point to point                                                          */

#define SEND_PARAMS                                                                                \
	(const void *buf, int count, mpi_handle type, int dest, int tag, mpi_handle comm)
MPI_WRAPPER(MPI_Send, SEND_PARAMS)
MPI_WRAPPER(MPI_Ssend, SEND_PARAMS)
MPI_WRAPPER(MPI_Bsend, SEND_PARAMS)
MPI_WRAPPER(MPI_Rsend, SEND_PARAMS)
MPI_WRAPPER(MPI_Recv, (void *buf, int count, mpi_handle type, int source, int tag, mpi_handle comm,
		       void *status))
MPI_WRAPPER(MPI_Isend, (const void *buf, int count, mpi_handle type, int dest, int tag,
			mpi_handle comm, void *request))
MPI_WRAPPER(MPI_Issend, (const void *buf, int count, mpi_handle type, int dest, int tag,
			 mpi_handle comm, void *request))
MPI_WRAPPER(MPI_Irecv, (void *buf, int count, mpi_handle type, int source, int tag, mpi_handle comm,
			void *request))
MPI_WRAPPER(MPI_Sendrecv, (const void *sendbuf, int sendcount, mpi_handle sendtype, int dest,
			   int sendtag, void *recvbuf, int recvcount, mpi_handle recvtype,
			   int source, int recvtag, mpi_handle comm, void *status))
MPI_WRAPPER(MPI_Sendrecv_replace, (void *buf, int count, mpi_handle type, int dest, int sendtag,
				   int source, int recvtag, mpi_handle comm, void *status))

/* A send to MPI_PROC_NULL (negative in both ABIs) moves nothing. */
static SCOPE_NOINST uint64_t sent_bytes(int rc, int count, mpi_handle type, int dest)
{
	return rc == MPI_OK && dest >= 0 ? type_bytes(count, type) : 0;
}

/* The four blocking sends differ only in their name. */
#define BLOCKING_SEND(name)                                                                        \
	int name(const void *buf, int count, mpi_handle type, int dest, int tag, mpi_handle comm)  \
	{                                                                                          \
		int rc;                                                                            \
		call_begin((void *)self_##name);                                                   \
		rc = REAL(name)(buf, count, type, dest, tag, comm);                                \
		call_end((void *)self_##name, sent_bytes(rc, count, type, dest), 0);               \
		return rc;                                                                         \
	}

BLOCKING_SEND(MPI_Send)
BLOCKING_SEND(MPI_Ssend)
BLOCKING_SEND(MPI_Bsend)
BLOCKING_SEND(MPI_Rsend)

int MPI_Recv(void *buf, int count, mpi_handle type, int source, int tag, mpi_handle comm,
	     void *status)
{
	struct own_status own;
	void *st = status_ignored(status) ? (void *)&own : status;
	int rc;

	call_begin((void *)self_MPI_Recv);
	rc = REAL(MPI_Recv)(buf, count, type, source, tag, comm, st);
	call_end((void *)self_MPI_Recv, 0, rc == MPI_OK ? received_bytes(st, type) : 0);
	return rc;
}

int MPI_Isend(const void *buf, int count, mpi_handle type, int dest, int tag, mpi_handle comm,
	      void *request)
{
	int rc;
	call_begin((void *)self_MPI_Isend);
	rc = REAL(MPI_Isend)(buf, count, type, dest, tag, comm, request);
	call_end((void *)self_MPI_Isend, sent_bytes(rc, count, type, dest), 0);
	return rc;
}

int MPI_Issend(const void *buf, int count, mpi_handle type, int dest, int tag, mpi_handle comm,
	       void *request)
{
	int rc;
	call_begin((void *)self_MPI_Issend);
	rc = REAL(MPI_Issend)(buf, count, type, dest, tag, comm, request);
	call_end((void *)self_MPI_Issend, sent_bytes(rc, count, type, dest), 0);
	return rc;
}

/* The receive's size is known only when it completes, in a Wait or Test
 * that may cover many requests: the posted size is counted here, and the
 * completing call counts nothing. */
int MPI_Irecv(void *buf, int count, mpi_handle type, int source, int tag, mpi_handle comm,
	      void *request)
{
	int rc;
	call_begin((void *)self_MPI_Irecv);
	rc = REAL(MPI_Irecv)(buf, count, type, source, tag, comm, request);
	call_end((void *)self_MPI_Irecv, 0,
		 rc == MPI_OK && source != mpi_abi()->proc_null ? type_bytes(count, type) : 0);
	return rc;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, mpi_handle sendtype, int dest, int sendtag,
		 void *recvbuf, int recvcount, mpi_handle recvtype, int source, int recvtag,
		 mpi_handle comm, void *status)
{
	struct own_status own;
	void *st = status_ignored(status) ? (void *)&own : status;
	int rc;

	call_begin((void *)self_MPI_Sendrecv);
	rc = REAL(MPI_Sendrecv)(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
				recvtype, source, recvtag, comm, st);
	call_end((void *)self_MPI_Sendrecv, sent_bytes(rc, sendcount, sendtype, dest),
		 rc == MPI_OK ? received_bytes(st, recvtype) : 0);
	return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, mpi_handle type, int dest, int sendtag, int source,
			 int recvtag, mpi_handle comm, void *status)
{
	struct own_status own;
	void *st = status_ignored(status) ? (void *)&own : status;
	int rc;

	call_begin((void *)self_MPI_Sendrecv_replace);
	rc = REAL(MPI_Sendrecv_replace)(buf, count, type, dest, sendtag, source, recvtag, comm, st);
	call_end((void *)self_MPI_Sendrecv_replace, sent_bytes(rc, count, type, dest),
		 rc == MPI_OK ? received_bytes(st, type) : 0);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Completion: time only, the bytes were counted when the requests began   */

MPI_WRAPPER(MPI_Wait, (void *request, void *status))
MPI_WRAPPER(MPI_Waitall, (int count, void *requests, void *statuses))
MPI_WRAPPER(MPI_Waitany, (int count, void *requests, int *index, void *status))
MPI_WRAPPER(MPI_Waitsome,
	    (int incount, void *requests, int *outcount, int *indices, void *statuses))
MPI_WRAPPER(MPI_Test, (void *request, int *flag, void *status))
MPI_WRAPPER(MPI_Testall, (int count, void *requests, int *flag, void *statuses))
MPI_WRAPPER(MPI_Testany, (int count, void *requests, int *index, int *flag, void *status))
MPI_WRAPPER(MPI_Testsome,
	    (int incount, void *requests, int *outcount, int *indices, void *statuses))

int MPI_Wait(void *request, void *status)
{
	int rc;
	call_begin((void *)self_MPI_Wait);
	rc = REAL(MPI_Wait)(request, status);
	call_end((void *)self_MPI_Wait, 0, 0);
	return rc;
}

int MPI_Waitall(int count, void *requests, void *statuses)
{
	int rc;
	call_begin((void *)self_MPI_Waitall);
	rc = REAL(MPI_Waitall)(count, requests, statuses);
	call_end((void *)self_MPI_Waitall, 0, 0);
	return rc;
}

int MPI_Waitany(int count, void *requests, int *index, void *status)
{
	int rc;
	call_begin((void *)self_MPI_Waitany);
	rc = REAL(MPI_Waitany)(count, requests, index, status);
	call_end((void *)self_MPI_Waitany, 0, 0);
	return rc;
}

int MPI_Waitsome(int incount, void *requests, int *outcount, int *indices, void *statuses)
{
	int rc;
	call_begin((void *)self_MPI_Waitsome);
	rc = REAL(MPI_Waitsome)(incount, requests, outcount, indices, statuses);
	call_end((void *)self_MPI_Waitsome, 0, 0);
	return rc;
}

int MPI_Test(void *request, int *flag, void *status)
{
	int rc;
	call_begin((void *)self_MPI_Test);
	rc = REAL(MPI_Test)(request, flag, status);
	call_end((void *)self_MPI_Test, 0, 0);
	return rc;
}

int MPI_Testall(int count, void *requests, int *flag, void *statuses)
{
	int rc;
	call_begin((void *)self_MPI_Testall);
	rc = REAL(MPI_Testall)(count, requests, flag, statuses);
	call_end((void *)self_MPI_Testall, 0, 0);
	return rc;
}

int MPI_Testany(int count, void *requests, int *index, int *flag, void *status)
{
	int rc;
	call_begin((void *)self_MPI_Testany);
	rc = REAL(MPI_Testany)(count, requests, index, flag, status);
	call_end((void *)self_MPI_Testany, 0, 0);
	return rc;
}

int MPI_Testsome(int incount, void *requests, int *outcount, int *indices, void *statuses)
{
	int rc;
	call_begin((void *)self_MPI_Testsome);
	rc = REAL(MPI_Testsome)(incount, requests, outcount, indices, statuses);
	call_end((void *)self_MPI_Testsome, 0, 0);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Collectives                                                             */

/*
 * What this rank's own buffers sent and received, counting its own block
 * on both sides; only the arguments MPI says are significant on this rank
 * are read (a non-root's receive type may be anything). With MPI_IN_PLACE
 * the in-place side counts as its block of the other side, so the numbers
 * do not depend on it. A gather of 3 ints to root 0 on 4 ranks:
 *
 *   rank 0 (root)   sent 12   received 48
 *   ranks 1..3      sent 12   received 0
 */

MPI_WRAPPER(MPI_Barrier, (mpi_handle comm))
MPI_WRAPPER(MPI_Bcast, (void *buf, int count, mpi_handle type, int root, mpi_handle comm))
MPI_WRAPPER(MPI_Reduce, (const void *sendbuf, void *recvbuf, int count, mpi_handle type,
			 mpi_handle op, int root, mpi_handle comm))
MPI_WRAPPER(MPI_Allreduce, (const void *sendbuf, void *recvbuf, int count, mpi_handle type,
			    mpi_handle op, mpi_handle comm))
MPI_WRAPPER(MPI_Gather, (const void *sendbuf, int sendcount, mpi_handle sendtype, void *recvbuf,
			 int recvcount, mpi_handle recvtype, int root, mpi_handle comm))
MPI_WRAPPER(MPI_Gatherv, (const void *sendbuf, int sendcount, mpi_handle sendtype, void *recvbuf,
			  const int *recvcounts, const int *displs, mpi_handle recvtype, int root,
			  mpi_handle comm))
MPI_WRAPPER(MPI_Scatter, (const void *sendbuf, int sendcount, mpi_handle sendtype, void *recvbuf,
			  int recvcount, mpi_handle recvtype, int root, mpi_handle comm))
MPI_WRAPPER(MPI_Scatterv,
	    (const void *sendbuf, const int *sendcounts, const int *displs, mpi_handle sendtype,
	     void *recvbuf, int recvcount, mpi_handle recvtype, int root, mpi_handle comm))
MPI_WRAPPER(MPI_Allgather, (const void *sendbuf, int sendcount, mpi_handle sendtype, void *recvbuf,
			    int recvcount, mpi_handle recvtype, mpi_handle comm))
MPI_WRAPPER(MPI_Allgatherv,
	    (const void *sendbuf, int sendcount, mpi_handle sendtype, void *recvbuf,
	     const int *recvcounts, const int *displs, mpi_handle recvtype, mpi_handle comm))
MPI_WRAPPER(MPI_Alltoall, (const void *sendbuf, int sendcount, mpi_handle sendtype, void *recvbuf,
			   int recvcount, mpi_handle recvtype, mpi_handle comm))
MPI_WRAPPER(MPI_Alltoallv, (const void *sendbuf, const int *sendcounts, const int *sdispls,
			    mpi_handle sendtype, void *recvbuf, const int *recvcounts,
			    const int *rdispls, mpi_handle recvtype, mpi_handle comm))

int MPI_Barrier(mpi_handle comm)
{
	int rc;
	call_begin((void *)self_MPI_Barrier);
	rc = REAL(MPI_Barrier)(comm);
	call_end((void *)self_MPI_Barrier, 0, 0);
	return rc;
}

int MPI_Bcast(void *buf, int count, mpi_handle type, int root, mpi_handle comm)
{
	uint64_t sent = 0, received = 0;
	int rc;

	call_begin((void *)self_MPI_Bcast);
	rc = REAL(MPI_Bcast)(buf, count, type, root, comm);
	if (rc == MPI_OK) {
		if (comm_rank(comm) == root)
			sent = type_bytes(count, type);
		else
			received = type_bytes(count, type);
	}
	call_end((void *)self_MPI_Bcast, sent, received);
	return rc;
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, mpi_handle type, mpi_handle op,
	       int root, mpi_handle comm)
{
	uint64_t sent = 0, received = 0;
	int rc;

	call_begin((void *)self_MPI_Reduce);
	rc = REAL(MPI_Reduce)(sendbuf, recvbuf, count, type, op, root, comm);
	if (rc == MPI_OK) {
		sent = type_bytes(count, type);
		if (comm_rank(comm) == root)
			received = sent;
	}
	call_end((void *)self_MPI_Reduce, sent, received);
	return rc;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, mpi_handle type, mpi_handle op,
		  mpi_handle comm)
{
	uint64_t bytes = 0;
	int rc;

	call_begin((void *)self_MPI_Allreduce);
	rc = REAL(MPI_Allreduce)(sendbuf, recvbuf, count, type, op, comm);
	if (rc == MPI_OK)
		bytes = type_bytes(count, type);
	call_end((void *)self_MPI_Allreduce, bytes, bytes);
	return rc;
}

int MPI_Gather(const void *sendbuf, int sendcount, mpi_handle sendtype, void *recvbuf,
	       int recvcount, mpi_handle recvtype, int root, mpi_handle comm)
{
	uint64_t sent = 0, received = 0;
	int rc;

	call_begin((void *)self_MPI_Gather);
	rc = REAL(MPI_Gather)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
			      comm);
	if (rc == MPI_OK) {
		if (comm_rank(comm) == root) {
			received = type_bytes((int64_t)recvcount * comm_size(comm), recvtype);
			sent = in_place(sendbuf) ? type_bytes(recvcount, recvtype)
						 : type_bytes(sendcount, sendtype);
		} else {
			sent = type_bytes(sendcount, sendtype);
		}
	}
	call_end((void *)self_MPI_Gather, sent, received);
	return rc;
}

int MPI_Gatherv(const void *sendbuf, int sendcount, mpi_handle sendtype, void *recvbuf,
		const int *recvcounts, const int *displs, mpi_handle recvtype, int root,
		mpi_handle comm)
{
	uint64_t sent = 0, received = 0;
	int rc, rank;

	call_begin((void *)self_MPI_Gatherv);
	rc = REAL(MPI_Gatherv)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
			       root, comm);
	if (rc == MPI_OK) {
		if ((rank = comm_rank(comm)) == root) {
			received = type_bytes(sum_counts(recvcounts, comm_size(comm)), recvtype);
			sent = in_place(sendbuf) ? type_bytes(recvcounts[rank], recvtype)
						 : type_bytes(sendcount, sendtype);
		} else {
			sent = type_bytes(sendcount, sendtype);
		}
	}
	call_end((void *)self_MPI_Gatherv, sent, received);
	return rc;
}

int MPI_Scatter(const void *sendbuf, int sendcount, mpi_handle sendtype, void *recvbuf,
		int recvcount, mpi_handle recvtype, int root, mpi_handle comm)
{
	uint64_t sent = 0, received = 0;
	int rc;

	call_begin((void *)self_MPI_Scatter);
	rc = REAL(MPI_Scatter)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
			       comm);
	if (rc == MPI_OK) {
		if (comm_rank(comm) == root) {
			sent = type_bytes((int64_t)sendcount * comm_size(comm), sendtype);
			received = in_place(recvbuf) ? type_bytes(sendcount, sendtype)
						     : type_bytes(recvcount, recvtype);
		} else {
			received = type_bytes(recvcount, recvtype);
		}
	}
	call_end((void *)self_MPI_Scatter, sent, received);
	return rc;
}

int MPI_Scatterv(const void *sendbuf, const int *sendcounts, const int *displs, mpi_handle sendtype,
		 void *recvbuf, int recvcount, mpi_handle recvtype, int root, mpi_handle comm)
{
	uint64_t sent = 0, received = 0;
	int rc, rank;

	call_begin((void *)self_MPI_Scatterv);
	rc = REAL(MPI_Scatterv)(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
				root, comm);
	if (rc == MPI_OK) {
		if ((rank = comm_rank(comm)) == root) {
			sent = type_bytes(sum_counts(sendcounts, comm_size(comm)), sendtype);
			received = in_place(recvbuf) ? type_bytes(sendcounts[rank], sendtype)
						     : type_bytes(recvcount, recvtype);
		} else {
			received = type_bytes(recvcount, recvtype);
		}
	}
	call_end((void *)self_MPI_Scatterv, sent, received);
	return rc;
}

int MPI_Allgather(const void *sendbuf, int sendcount, mpi_handle sendtype, void *recvbuf,
		  int recvcount, mpi_handle recvtype, mpi_handle comm)
{
	uint64_t sent = 0, received = 0;
	int rc;

	call_begin((void *)self_MPI_Allgather);
	rc = REAL(MPI_Allgather)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
	if (rc == MPI_OK) {
		received = type_bytes((int64_t)recvcount * comm_size(comm), recvtype);
		sent = in_place(sendbuf) ? type_bytes(recvcount, recvtype)
					 : type_bytes(sendcount, sendtype);
	}
	call_end((void *)self_MPI_Allgather, sent, received);
	return rc;
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, mpi_handle sendtype, void *recvbuf,
		   const int *recvcounts, const int *displs, mpi_handle recvtype, mpi_handle comm)
{
	uint64_t sent = 0, received = 0;
	int rc;

	call_begin((void *)self_MPI_Allgatherv);
	rc = REAL(MPI_Allgatherv)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
				  recvtype, comm);
	if (rc == MPI_OK) {
		received = type_bytes(sum_counts(recvcounts, comm_size(comm)), recvtype);
		sent = in_place(sendbuf) ? type_bytes(recvcounts[comm_rank(comm)], recvtype)
					 : type_bytes(sendcount, sendtype);
	}
	call_end((void *)self_MPI_Allgatherv, sent, received);
	return rc;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, mpi_handle sendtype, void *recvbuf,
		 int recvcount, mpi_handle recvtype, mpi_handle comm)
{
	uint64_t sent = 0, received = 0;
	int rc;

	call_begin((void *)self_MPI_Alltoall);
	rc = REAL(MPI_Alltoall)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
	if (rc == MPI_OK) {
		int n = comm_size(comm);
		received = type_bytes((int64_t)recvcount * n, recvtype);
		sent = in_place(sendbuf) ? received : type_bytes((int64_t)sendcount * n, sendtype);
	}
	call_end((void *)self_MPI_Alltoall, sent, received);
	return rc;
}

int MPI_Alltoallv(const void *sendbuf, const int *sendcounts, const int *sdispls,
		  mpi_handle sendtype, void *recvbuf, const int *recvcounts, const int *rdispls,
		  mpi_handle recvtype, mpi_handle comm)
{
	uint64_t sent = 0, received = 0;
	int rc;

	call_begin((void *)self_MPI_Alltoallv);
	rc = REAL(MPI_Alltoallv)(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
				 rdispls, recvtype, comm);
	if (rc == MPI_OK) {
		int n = comm_size(comm);
		received = type_bytes(sum_counts(recvcounts, n), recvtype);
		sent = in_place(sendbuf) ? received
					 : type_bytes(sum_counts(sendcounts, n), sendtype);
	}
	call_end((void *)self_MPI_Alltoallv, sent, received);
	return rc;
}
