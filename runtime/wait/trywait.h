// fi_trywait for ufi's CQs, EQs and counters: may the application sleep on their FI_GETWAIT
// fds now? Each waitable class registers its own check here (the wait machinery sits below
// the objects and knows none of their types); the check progresses and arms the transports
// behind its object and clears stale signals, so that an fd it returns 0 for becomes
// readable on the next completion or event.
#pragma once

#include <rdma/fabric.h>

#include <cstddef>

namespace ufi::runtime::wait {

// One class's check: 0 when its object may be waited on, -FI_EAGAIN when it has something to
// read, -FI_EINVAL when `fid` is not one of ufi's objects of that class or has no fd.
using TrywaitCheck = int (*)(fid_t fid) noexcept;

// Records `check` as class `fclass`'s (FI_CLASS_* below 64). Called at static
// initialisation (UFI_REGISTER_TRYWAIT) by each waitable object's own file.
void register_trywait(size_t fclass, TrywaitCheck check) noexcept;

// -FI_EINVAL, logged: `fid` has a waitable class but is not one of ufi's objects.
int not_ufi_object(fid_t fid) noexcept;

// The check of a class whose objects `of` finds (nullptr: not ufi's) and that answer trywait().
template <typename Object, Object *(*of)(fid_t) noexcept>
int trywait_check(fid_t fid) noexcept {
    Object *o = of(fid);
    return o != nullptr ? o->trywait() : not_ufi_object(fid);
}

struct TrywaitRegistration {
    TrywaitRegistration(size_t fclass, TrywaitCheck check) noexcept { register_trywait(fclass, check); }
};
#define UFI_REGISTER_TRYWAIT(name, fclass, check) \
    const ::ufi::runtime::wait::TrywaitRegistration ufi_trywait_registration_##name{(fclass), (check)}

// 0 when every object may be waited on; -FI_EAGAIN when one has something to read (or a
// transport with no event fd, which must be polled); -FI_EINVAL for NULL arguments, objects
// that are not ufi's CQs, EQs or counters, or objects without an fd wait object.
int trywait(fid **fids, int count) noexcept;

}  // namespace ufi::runtime::wait
