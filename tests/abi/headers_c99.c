/* SPDX-License-Identifier: BSD-2-Clause */ /* Part of ufi. */
/*
 * ufi's public headers under C99 (built with -std=c99 and -std=gnu99, warnings
 * as errors). Not with -pedantic: libfabric 2.x's fi_domain_attr
 * (data_progress/progress) and fi_mr_attr (mr_iov/dmabuf) use anonymous
 * unions, a C11 feature that GCC and Clang accept in C99 mode as an extension
 * but that -pedantic reports. ufi keeps libfabric's declarations (the member
 * names are API), so strict ISO C99 is out for 2.x programs, as it is with
 * libfabric's own headers; C11 -pedantic is checked by abi_check.c.
 */
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_trigger.h>

/* Something to compile that uses the anonymous unions the way C99 code
 * would. */
int ufi_abi_c99_progress(const struct fi_domain_attr *attr);
int ufi_abi_c99_progress(const struct fi_domain_attr *attr)
{
    return attr->progress == attr->data_progress;
}
