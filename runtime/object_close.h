// The one way a runtime object is freed: fi_close calls close_object(), which asks the object
// to shut down (shut(): its checks and teardown) and deletes it when it may. No object deletes
// itself. (Fabrics, domains and AVs, plain structs, have their close_fabric/close_domain/
// close_av, which do the same in one function.)
#pragma once

#include <rdma/fi_errno.h>

#include <cstdint>

namespace ufi::runtime {

// What shut() found.
enum class Shut : uint8_t {
    kFree,  // shut down: free it
    kBusy,  // objects are still bound to it: fi_close fails with -FI_EBUSY, nothing changed
    kKeep,  // shut down, but a thread may still be inside it (a sleeper that did not leave):
            // not freed, a leak logged rather than a use after free
};

template <typename T>
int close_object(T *object) noexcept {
    switch (object->shut()) {
        case Shut::kBusy: return -FI_EBUSY;
        case Shut::kKeep: return 0;
        case Shut::kFree: break;
    }
    delete object;
    return 0;
}

}  // namespace ufi::runtime
