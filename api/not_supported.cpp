// The tables of calls an object does not offer (api/not_supported.h).
#include "api/not_supported.h"

namespace ufi::api {

fi_ops_msg g_no_msg_ops = {
    .size = sizeof(fi_ops_msg),
    .recv = NoOp<decltype(fi_ops_msg::recv)>::fn,
    .recvv = NoOp<decltype(fi_ops_msg::recvv)>::fn,
    .recvmsg = NoOp<decltype(fi_ops_msg::recvmsg)>::fn,
    .send = NoOp<decltype(fi_ops_msg::send)>::fn,
    .sendv = NoOp<decltype(fi_ops_msg::sendv)>::fn,
    .sendmsg = NoOp<decltype(fi_ops_msg::sendmsg)>::fn,
    .inject = NoOp<decltype(fi_ops_msg::inject)>::fn,
    .senddata = NoOp<decltype(fi_ops_msg::senddata)>::fn,
    .injectdata = NoOp<decltype(fi_ops_msg::injectdata)>::fn,
};

fi_ops_tagged g_no_tagged_ops = {
    .size = sizeof(fi_ops_tagged),
    .recv = NoOp<decltype(fi_ops_tagged::recv)>::fn,
    .recvv = NoOp<decltype(fi_ops_tagged::recvv)>::fn,
    .recvmsg = NoOp<decltype(fi_ops_tagged::recvmsg)>::fn,
    .send = NoOp<decltype(fi_ops_tagged::send)>::fn,
    .sendv = NoOp<decltype(fi_ops_tagged::sendv)>::fn,
    .sendmsg = NoOp<decltype(fi_ops_tagged::sendmsg)>::fn,
    .inject = NoOp<decltype(fi_ops_tagged::inject)>::fn,
    .senddata = NoOp<decltype(fi_ops_tagged::senddata)>::fn,
    .injectdata = NoOp<decltype(fi_ops_tagged::injectdata)>::fn,
};

fi_ops_rma g_no_rma_ops = {
    .size = sizeof(fi_ops_rma),
    .read = NoOp<decltype(fi_ops_rma::read)>::fn,
    .readv = NoOp<decltype(fi_ops_rma::readv)>::fn,
    .readmsg = NoOp<decltype(fi_ops_rma::readmsg)>::fn,
    .write = NoOp<decltype(fi_ops_rma::write)>::fn,
    .writev = NoOp<decltype(fi_ops_rma::writev)>::fn,
    .writemsg = NoOp<decltype(fi_ops_rma::writemsg)>::fn,
    .inject = NoOp<decltype(fi_ops_rma::inject)>::fn,
    .writedata = NoOp<decltype(fi_ops_rma::writedata)>::fn,
    .injectdata = NoOp<decltype(fi_ops_rma::injectdata)>::fn,
};

fi_ops_atomic g_no_atomic_ops = {
    .size = sizeof(fi_ops_atomic),
    .write = NoOp<decltype(fi_ops_atomic::write)>::fn,
    .writev = NoOp<decltype(fi_ops_atomic::writev)>::fn,
    .writemsg = NoOp<decltype(fi_ops_atomic::writemsg)>::fn,
    .inject = NoOp<decltype(fi_ops_atomic::inject)>::fn,
    .readwrite = NoOp<decltype(fi_ops_atomic::readwrite)>::fn,
    .readwritev = NoOp<decltype(fi_ops_atomic::readwritev)>::fn,
    .readwritemsg = NoOp<decltype(fi_ops_atomic::readwritemsg)>::fn,
    .compwrite = NoOp<decltype(fi_ops_atomic::compwrite)>::fn,
    .compwritev = NoOp<decltype(fi_ops_atomic::compwritev)>::fn,
    .compwritemsg = NoOp<decltype(fi_ops_atomic::compwritemsg)>::fn,
    .writevalid = NoOp<decltype(fi_ops_atomic::writevalid)>::fn,
    .readwritevalid = NoOp<decltype(fi_ops_atomic::readwritevalid)>::fn,
    .compwritevalid = NoOp<decltype(fi_ops_atomic::compwritevalid)>::fn,
};

fi_ops_cm g_no_cm_ops = {
    .size = sizeof(fi_ops_cm),
    .setname = NoOp<decltype(fi_ops_cm::setname)>::fn,
    .getname = NoOp<decltype(fi_ops_cm::getname)>::fn,
    .getpeer = NoOp<decltype(fi_ops_cm::getpeer)>::fn,
    .connect = NoOp<decltype(fi_ops_cm::connect)>::fn,
    .listen = NoOp<decltype(fi_ops_cm::listen)>::fn,
    .accept = NoOp<decltype(fi_ops_cm::accept)>::fn,
    .reject = NoOp<decltype(fi_ops_cm::reject)>::fn,
    .shutdown = NoOp<decltype(fi_ops_cm::shutdown)>::fn,
    .join = NoOp<decltype(fi_ops_cm::join)>::fn,
};

}  // namespace ufi::api
