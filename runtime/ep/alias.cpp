// fi_ep_alias's handle (runtime/ep/alias.h).
#include "runtime/ep/alias.h"

#include "runtime/ep/endpoint.h"

namespace ufi::runtime::ep {

EndpointAlias::EndpointAlias(Endpoint &parent, void *context, fi_ops *fid_ops) noexcept
    : EndpointFace{} {
    endpoint = &parent;
    fid.fclass = FI_CLASS_EP;
    fid.context = context;
    fid.ops = fid_ops;
    copy_tables(parent);
}

void EndpointAlias::copy_tables(const fid_ep &from) noexcept {
    // (fi_ops_ep and fi_ops_cm are the endpoint's: they act on the endpoint behind the handle.)
    ops = from.ops;
    cm = from.cm;
    msg = from.msg;
    rma = from.rma;
    tagged = from.tagged;
    atomic = from.atomic;
    collective = from.collective;
}

Shut EndpointAlias::shut() noexcept {
    endpoint->forget_alias(this);
    return Shut::kFree;
}

}  // namespace ufi::runtime::ep
