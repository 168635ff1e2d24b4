/* fi_prov_ini against loaders of different API versions: this program is the "loader" (its
 * own fi_version, exported with -rdynamic, is the one libufi-fi.so finds). A loader older
 * than 1.5 is refused (NULL, a line on stderr); a 1.17 loader is offered API 1.17 (a loader
 * refuses providers of a newer API); a loader newer than ufi's headers gets ufi's own.
 *   loader_version_test <libufi-fi.so> <major> <minor> <expected: refused|fi_version> */
#include <rdma/fabric.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct provider_head {
    uint32_t version;
    uint32_t fi_version;
    struct fi_context context;
    const char *name;
};

static uint32_t g_version;

__attribute__((visibility("default"))) uint32_t fi_version(void) { return g_version; }

int main(int argc, char **argv) {
    if (argc != 5) return 2;
    g_version = FI_VERSION(atoi(argv[2]), atoi(argv[3]));
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    struct provider_head *(*ini)(void) = (struct provider_head * (*)(void)) dlsym(h, "fi_prov_ini");
    if (ini == NULL) {
        fprintf(stderr, "no fi_prov_ini\n");
        return 1;
    }
    struct provider_head *p = ini();
    if (strcmp(argv[4], "refused") == 0) {
        if (p != NULL) {
            fprintf(stderr, "loader %s.%s: not refused\n", argv[2], argv[3]);
            return 1;
        }
        printf("loader %s.%s refused\n", argv[2], argv[3]);
        return 0;
    }
    if (p == NULL || strcmp(p->name, "ufi") != 0) {
        fprintf(stderr, "loader %s.%s: no ufi provider\n", argv[2], argv[3]);
        return 1;
    }
    /* "ufi": the API of the headers ufi was built with. */
    unsigned want_major = FI_MAJOR_VERSION, want_minor = FI_MINOR_VERSION;
    if (strcmp(argv[4], "ufi") != 0) sscanf(argv[4], "%u.%u", &want_major, &want_minor);
    if (p->fi_version != FI_VERSION(want_major, want_minor)) {
        fprintf(stderr, "loader %s.%s: offered %u.%u, expected %s\n", argv[2], argv[3],
                FI_MAJOR(p->fi_version), FI_MINOR(p->fi_version), argv[4]);
        return 1;
    }
    printf("loader %s.%s offered %u.%u\n", argv[2], argv[3], FI_MAJOR(p->fi_version),
           FI_MINOR(p->fi_version));
    return 0;
}
