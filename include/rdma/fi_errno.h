/* SPDX-License-Identifier: BSD-2-Clause */ /* Part of ufi. */
/*
 * rdma/fi_errno.h: the error codes of the libfabric API, as ufi returns them.
 *
 * Every call returns 0 or a negated code from this file. The low codes are the
 * host's errno values (so -FI_EAGAIN == -EAGAIN); codes from FI_ERRNO_OFFSET up
 * are libfabric's own.
 */
#ifndef FI_ERRNO_H
#define FI_ERRNO_H

#include <errno.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FI_SUCCESS 0

/* Codes shared with errno.h (only the ones libfabric names). */
#define FI_EPERM          EPERM
#define FI_ENOENT         ENOENT
#define FI_EINTR          EINTR
#define FI_EIO            EIO
#define FI_E2BIG          E2BIG
#define FI_EBADF          EBADF
#define FI_EAGAIN         EAGAIN
#define FI_ENOMEM         ENOMEM
#define FI_EACCES         EACCES
#define FI_EFAULT         EFAULT
#define FI_EBUSY          EBUSY
#define FI_ENODEV         ENODEV
#define FI_EINVAL         EINVAL
#define FI_EMFILE         EMFILE
#define FI_ENOSPC         ENOSPC
#define FI_ENOSYS         ENOSYS
#define FI_EWOULDBLOCK    EWOULDBLOCK
#define FI_ENOMSG         ENOMSG
#define FI_ENODATA        ENODATA
#define FI_EOVERFLOW      EOVERFLOW
#define FI_EPROTO         EPROTO
#define FI_EMSGSIZE       EMSGSIZE
#define FI_ENOPROTOOPT    ENOPROTOOPT
#define FI_EOPNOTSUPP     EOPNOTSUPP
#define FI_EADDRINUSE     EADDRINUSE
#define FI_EADDRNOTAVAIL  EADDRNOTAVAIL
#define FI_ENETDOWN       ENETDOWN
#define FI_ENETUNREACH    ENETUNREACH
#define FI_ECONNABORTED   ECONNABORTED
#define FI_ECONNRESET     ECONNRESET
#define FI_ENOBUFS        ENOBUFS
#define FI_EISCONN        EISCONN
#define FI_ENOTCONN       ENOTCONN
#define FI_ESHUTDOWN      ESHUTDOWN
#define FI_ETIMEDOUT      ETIMEDOUT
#define FI_ECONNREFUSED   ECONNREFUSED
#define FI_EHOSTDOWN      EHOSTDOWN
#define FI_EHOSTUNREACH   EHOSTUNREACH
#define FI_EALREADY       EALREADY
#define FI_EINPROGRESS    EINPROGRESS
#define FI_EREMOTEIO      EREMOTEIO
#define FI_ECANCELED      ECANCELED
#define FI_EKEYREJECTED   EKEYREJECTED

/* libfabric's own codes start here, above any errno value. */
#define FI_ERRNO_OFFSET 256

enum {
    FI_EOTHER = FI_ERRNO_OFFSET, /* error with no better code */
    FI_ETOOSMALL = 257,          /* caller's buffer too small */
    FI_EOPBADSTATE = 258,        /* object not in a state that allows this */
    FI_EAVAIL = 259,             /* an error entry waits to be read */
    FI_EBADFLAGS = 260,          /* flags not supported */
    FI_ENOEQ = 261,              /* no (usable) event queue */
    FI_EDOMAIN = 262,            /* wrong resource domain */
    FI_ENOCQ = 263,              /* no (usable) completion queue */
    FI_ECRC = 264,               /* checksum mismatch */
    FI_ETRUNC = 265,             /* data truncated */
    FI_ENOKEY = 266,             /* key needed but absent */
    FI_ENOAV = 267,              /* no (usable) address vector */
    FI_EOVERRUN = 268,           /* a queue overflowed */
    FI_ENORX = 269,              /* receiver had no buffer posted */
    FI_ENOMR = 270,              /* out of memory registrations (2.x) */
    FI_EFIREWALLADDR = 271,      /* peer is behind a firewall (2.x) */
    FI_ERRNO_MAX
};

/* Readable text for a code; callers usually pass -ret. */
const char *fi_strerror(int errnum);

#ifdef __cplusplus
}
#endif

#endif /* FI_ERRNO_H */
