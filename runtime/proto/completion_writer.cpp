// Completions as the data path writes them (completion_writer.h).
#include "runtime/proto/completion_writer.h"

#include "base/log/log.h"
#include "runtime/cq/cq.h"

#include <rdma/fi_errno.h>

#include <new>

namespace ufi::runtime::proto {

bool CompletionWriter::write_now(const Completion &c) noexcept {
    int rc;
    if (c.err == 0) {
        rc = c.cq->write(c.context, c.flags, c.len, c.buf, c.data, c.tag, c.src);
    } else {
        fi_cq_err_entry e{};
        e.op_context = c.context;
        e.flags = c.flags;
        e.len = c.len;
        e.buf = c.buf;
        e.data = c.data;
        e.tag = c.tag;
        e.olen = c.olen;
        e.err = c.err;
        e.err_data = c.err_data.empty() ? nullptr : const_cast<uint8_t *>(c.err_data.data());
        e.err_data_size = c.err_data.size();
        e.prov_errno = c.err;
        e.src_addr = c.src;
        rc = c.cq->write_error(e);
    }
    return rc != -FI_EAGAIN;
}

void CompletionWriter::keep(const Completion &c) noexcept {
    try {
        overflow_.push_back(c);
    } catch (const std::bad_alloc &) {
        UFI_LOG_WARN(log::Subsys::EpData, "out of memory: a completion is lost");
    }
}

unsigned CompletionWriter::flush() noexcept {
    unsigned done = 0;
    while (!overflow_.empty() && write_now(overflow_.front())) {
        overflow_.pop_front();
        ++done;
    }
    return done;
}

}  // namespace ufi::runtime::proto
