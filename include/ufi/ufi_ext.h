/* SPDX-License-Identifier: BSD-2-Clause */
/* Part of ufi. */
/*
 * ufi's own extension to libfabric's API: the diagnostic reports behind `ufi_info`
 * (versions, UCT transports, configuration, topology, the domains fi_getinfo offers and
 * why the last fi_getinfo call excluded what it excluded).
 *
 * A report is a list of records, each a kind, a name and ordered key/value fields whose
 * values are printable strings; the field kind tells how to render a value in JSON.
 * This keeps the ABI small while the set of facts grows.
 */
#ifndef UFI_EXT_H
#define UFI_EXT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UFI_EXT_API_VERSION 1

enum ufi_ext_value_kind {
    UFI_EXT_STRING,
    UFI_EXT_NUMBER, /* a decimal integer or floating-point number */
    UFI_EXT_BOOL,   /* "true" or "false" */
    UFI_EXT_LIST,   /* items separated by ", " (items never contain a comma) */
};

struct ufi_ext_field {
    const char *key;
    const char *value;
    enum ufi_ext_value_kind kind;
};

struct ufi_ext_record {
    const char *kind; /* "version", "component", "md", "transport", "variable", "device", ... */
    const char *name;
    size_t nfields;
    const struct ufi_ext_field *fields;
};

struct ufi_ext_report {
    size_t nrecords;
    const struct ufi_ext_record *records;
};

enum ufi_ext_topic {
    UFI_EXT_VERSIONS,        /* ufi, libfabric API, UCX */
    UFI_EXT_TRANSPORTS,      /* UCT components, memory domains, transport resources */
    UFI_EXT_CONFIG,          /* every environment variable ufi reads */
    UFI_EXT_TOPOLOGY,        /* the process binding and I/O devices with distances */
    UFI_EXT_DOMAINS,         /* the domains fi_getinfo offers, best first, and exclusions */
    UFI_EXT_GETINFO_EXPLAIN, /* why the calling thread's last fi_getinfo excluded entries */
};

/* Builds a report. 0 on success; -FI_EINVAL for a bad topic or NULL; -FI_ENOMEM.
 * Free it with ufi_ext_free_report. */
int ufi_ext_get_report(enum ufi_ext_topic topic, struct ufi_ext_report **report);
void ufi_ext_free_report(struct ufi_ext_report *report);

/* The value of a field of a record, or NULL. */
const char *ufi_ext_field_value(const struct ufi_ext_record *record, const char *key);

#ifdef __cplusplus
}
#endif

#endif /* UFI_EXT_H */
