// The receive side's matching, by libfabric's rules: the receives posted and the messages
// that arrived before theirs, one pair of queues per kind (untagged, tagged), and the rule
// that pairs them (source, tag under the ignore bits). Plain code over the records: no
// transport, no peers, no completions; unit-tested alone (tests/unit/proto/match_test.cpp).
// What happens once a pair is found (copying, rendezvous, multi-receive buffers, completions)
// is the data path's.
#pragma once

#include "base/intrusive_list.h"
#include "runtime/proto/requests.h"

#include <rdma/fabric.h>

#include <cstdint>

namespace ufi::runtime::proto {

// Which sources the endpoint's receives name, from its capabilities (fi_getinfo(3)):
// FI_DIRECTED_RECV covers both kinds of receive, FI_TAGGED_DIRECTED_RECV tagged ones;
// FI_EXACT_DIRECTED_RECV alone is FI_DIRECTED_RECV without FI_ADDR_UNSPEC, and next to either
// of them only takes FI_ADDR_UNSPEC away.
struct SourceRule {
    // Whether receives of each kind match their source ([0] untagged, [1] tagged): indexed by
    // the kind, one load where a choice between two fields cost the receive path a cmov and
    // three instructions.
    bool directed_by_kind[2] = {false, false};
    bool exact = false;  // FI_ADDR_UNSPEC is refused where the source is matched

    static SourceRule from_caps(uint64_t caps) noexcept {
        SourceRule r;
        r.directed_by_kind[0] = (caps & FI_DIRECTED_RECV) != 0 ||
                                ((caps & FI_EXACT_DIRECTED_RECV) != 0 &&
                                 (caps & FI_TAGGED_DIRECTED_RECV) == 0);
        r.directed_by_kind[1] =
            (caps & (FI_DIRECTED_RECV | FI_TAGGED_DIRECTED_RECV | FI_EXACT_DIRECTED_RECV)) != 0;
        r.exact = (caps & FI_EXACT_DIRECTED_RECV) != 0;
        return r;
    }
    // Whether receives of this kind match their source at all (else src is ignored).
    bool directed(bool tagged) const noexcept { return directed_by_kind[tagged ? 1 : 0]; }
};

class MatchQueues {
  public:
    // Whether posted receive r takes a message of kind `tagged` from peer `src` (kNoPeer:
    // unknown) with `tag`: the same kind, its source if it names one, and the tag's bits
    // outside r's ignore mask.
    static bool matches(const RecvReq &r, uint32_t src, bool tagged, uint64_t tag) noexcept {
        if (r.tagged != tagged) return false;
        if (r.src != kNoPeer && r.src != src) return false;
        return !tagged || ((r.tag ^ tag) & ~r.ignore) == 0;
    }

    List<RecvReq> &posted(bool tagged) noexcept { return tagged ? posted_tagged_ : posted_msg_; }
    List<UnexpMsg> &unexpected(bool tagged) noexcept {
        return tagged ? unexp_tagged_ : unexp_msg_;
    }
    bool has_unexpected(bool tagged) const noexcept {
        return !(tagged ? unexp_tagged_ : unexp_msg_).empty();
    }

    // The oldest posted receive that takes the message, left in its queue; nullptr if none.
    RecvReq *first_posted(uint32_t src, bool tagged, uint64_t tag) noexcept {
        for (RecvReq *r = posted(tagged).front(); r != nullptr; r = r->hook.next) {
            if (matches(*r, src, tagged, tag)) return r;
        }
        return nullptr;
    }
    // The oldest unexpected message r takes that no FI_PEEK | FI_CLAIM holds, left in its
    // queue; nullptr if none.
    UnexpMsg *first_unexpected(const RecvReq &r) noexcept {
        for (UnexpMsg *u = unexpected(r.tagged).front(); u != nullptr; u = u->hook.next) {
            if (u->claim_ctx == nullptr && matches(r, u->src, u->tagged, u->tag)) return u;
        }
        return nullptr;
    }

    void post(RecvReq *r) noexcept { posted(r->tagged).push_back(r); }
    void unpost(RecvReq *r) noexcept { posted(r->tagged).remove(r); }
    // The same where the caller knows r's kind (the inline common cases: the kind is a
    // constant there, so the queue is chosen at compile time).
    void post(RecvReq *r, bool tagged) noexcept { posted(tagged).push_back(r); }
    void unpost(RecvReq *r, bool tagged) noexcept { posted(tagged).remove(r); }
    void add_unexpected(UnexpMsg *u) noexcept { unexpected(u->tagged).push_back(u); }
    void remove_unexpected(UnexpMsg *u) noexcept { unexpected(u->tagged).remove(u); }

  private:
    List<RecvReq> posted_msg_;
    List<RecvReq> posted_tagged_;
    List<UnexpMsg> unexp_msg_;
    List<UnexpMsg> unexp_tagged_;
};

}  // namespace ufi::runtime::proto
