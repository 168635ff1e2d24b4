/* SPDX-License-Identifier: BSD-2-Clause */ /* Part of ufi. */
/*
 * Compile-time ABI check of ufi's public headers against libfabric 2.x:
 * every public struct's size and member offsets (layout_asserts.h) and every
 * public constant's value (value_asserts.h). Both files are generated data,
 * copied unchanged from shared/abi/. If this file compiles, the check passed;
 * main() exists only so the build produces something meson can run.
 */
#include <stddef.h>

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

/* A system libfabric 1.x header picked up by mistake would fail here first,
 * with a clearer message than the asserts below. */
_Static_assert(FI_MAJOR_VERSION == 2, "not ufi's rdma/fabric.h (include path?)");

/* The generated header's opening comment contains "rdma/" "*.h", which
 * -Wcomment reports; the text is data and stays unchanged. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wcomment"
#endif
#include "layout_asserts.h"
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/*
 * ufi declares API 2.7 (shared/abi-notes.md), but value_asserts.h records
 * FI_MINOR_VERSION 6, the value in the headers it was generated from (which
 * already carry the 2.7 additions: FI_XPU, max_xpu_ctx_cnt, ...). Check ufi's
 * value here, then show the generated file the value it expects; every other
 * constant is checked as generated.
 */
_Static_assert(FI_MINOR_VERSION == 7, "ufi declares libfabric API 2.7");
_Static_assert(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION) == 0x20007,
               "FI_VERSION(2, 7)");
#pragma push_macro("FI_MINOR_VERSION")
#undef FI_MINOR_VERSION
#define FI_MINOR_VERSION 6
#include "value_asserts.h"
#pragma pop_macro("FI_MINOR_VERSION")
_Static_assert(FI_MINOR_VERSION == 7, "FI_MINOR_VERSION restored");

/* Facts abi-notes.md states that the generated files do not cover. */
_Static_assert(sizeof(struct fi_triggered_context) == sizeof(struct fi_context),
               "fi_triggered_context stands in for fi_context");
_Static_assert(sizeof(struct fi_triggered_context2) ==
                   sizeof(struct fi_context2),
               "fi_triggered_context2 stands in for fi_context2");
_Static_assert(offsetof(struct fid_pep, cm) == offsetof(struct fid_ep, cm),
               "fi_getname/fi_setname reach cm the same way in ep and pep");
_Static_assert(offsetof(struct fid_stx, ops) == offsetof(struct fid_ep, ops),
               "fi_cancel/fi_setopt reach ops the same way in ep and stx");
_Static_assert(offsetof(struct fi_domain_attr, data_progress) ==
                   offsetof(struct fi_domain_attr, progress),
               "progress aliases data_progress");
/* (int) casts: the constants belong to different enums (-Wenum-compare). */
_Static_assert((int)FI_DIFF == (int)FI_ATOMIC_OP_LAST, "FI_DIFF is the last op");
_Static_assert((int)FI_INT128 == (int)FI_DATATYPE_LAST, "2.x types start at LAST");
_Static_assert(FI_EP_SOCK_STREAM == FI_EP_UNSPEC, "FI_EP_SOCK_STREAM alias");

int main(void)
{
    return 0;
}
