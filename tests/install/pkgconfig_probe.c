/* Built by install_test.sh with nothing but pkg-config's flags for `libfabric` (or `ufi`):
 * an ordinary libfabric program. It lists the providers fi_getinfo answers with, and says
 * which file its fi_getinfo came from, so the test can check that the installed ufi served
 * it (not the build tree's, not the system's libfabric). */
#define _GNU_SOURCE
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <dlfcn.h>
#include <stdio.h>

int main(void) {
    struct fi_info *info = NULL;
    const int rc = fi_getinfo(FI_VERSION(1, 18), NULL, NULL, 0, NULL, &info);
    if (rc != 0 || info == NULL) {
        fprintf(stderr, "fi_getinfo: %s\n", fi_strerror(-rc));
        return 1;
    }
    printf("provider %s version %u.%u\n", info->fabric_attr->prov_name,
           FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
    Dl_info where;
    if (dladdr((void *)&fi_getinfo, &where) != 0 && where.dli_fname != NULL) {
        printf("library %s\n", where.dli_fname);
    }
    fi_freeinfo(info);
    return 0;
}
