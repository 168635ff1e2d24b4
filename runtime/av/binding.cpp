// binding.h: from handles to ufi AVs (the rest of binding.h is in av.cpp).
#include "runtime/av/binding.h"

#include "runtime/av/av.h"
#include "runtime/fid_cast.h"

namespace ufi::runtime::av {

Av *av_of(fid_t fid) noexcept {
    return object_of<Av>(fid, FI_CLASS_AV);
}

Av *av_of(fid_av *av) noexcept {
    return av == nullptr ? nullptr : av_of(&av->fid);
}

}  // namespace ufi::runtime::av
