// Connected endpoints (FI_EP_MSG) in one process, over loopback: a passive endpoint listens,
// a client connects with connection data at FI_OPT_CM_DATA_SIZE, the server accepts with its
// own; both see FI_CONNECTED, messages, tagged messages and RMA flow both ways, and
// fi_shutdown gives the peer FI_SHUTDOWN. Refusal with data, data one byte too long, and a
// connection to no listener give their documented errors. Every wait is bounded. Where the
// transport set has no tcp (shared memory only), no FI_EP_MSG entry exists: skipped.
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

namespace ufi::msg_test {
namespace {

constexpr int kWaitMs = 20000;

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 11);
    return v;
}

struct Side {
    fid_eq *eq = nullptr;
    fid_cq *cq = nullptr;
    fid_ep *ep = nullptr;
};

class MsgEpTest : public ::testing::Test {
  protected:
    void SetUp() override {
        fi_info *hints = fi_allocinfo();
        hints->ep_attr->type = FI_EP_MSG;
        hints->caps = FI_MSG | FI_TAGGED | FI_RMA;
        hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
        const int rc = fi_getinfo(FI_VERSION(2, 0), "127.0.0.1", "0", FI_SOURCE, hints, &info_);
        fi_freeinfo(hints);
        if (rc == -FI_ENODATA) GTEST_SKIP() << "no FI_EP_MSG entry on 127.0.0.1 (no tcp in this transport set)";
        ASSERT_EQ(rc, 0) << fi_strerror(-rc);
        ASSERT_EQ(fi_fabric(info_->fabric_attr, &fabric_, nullptr), 0);
        ASSERT_EQ(fi_domain(fabric_, info_, &domain_, nullptr), 0);
        fi_eq_attr eq_attr{};
        eq_attr.wait_obj = FI_WAIT_UNSPEC;
        ASSERT_EQ(fi_eq_open(fabric_, &eq_attr, &pep_eq_, nullptr), 0);
        ASSERT_EQ(fi_passive_ep(fabric_, info_, &pep_, nullptr), 0);
        ASSERT_EQ(fi_pep_bind(pep_, &pep_eq_->fid, 0), 0);
        ASSERT_EQ(fi_listen(pep_), 0);
        sockaddr_in sa{};
        size_t len = sizeof sa;
        ASSERT_EQ(fi_getname(&pep_->fid, &sa, &len), 0);
        ASSERT_EQ(len, sizeof sa);
        port_ = ntohs(sa.sin_port);
        ASSERT_NE(port_, 0);
    }

    void TearDown() override {
        for (Side *s : {&client_, &server_}) close_side(*s);
        if (shared_rx_) {
            EXPECT_EQ(fi_close(&shared_rx_->fid), 0);
        }
        if (pep_) {
            EXPECT_EQ(fi_close(&pep_->fid), 0);
        }
        if (pep_eq_) {
            EXPECT_EQ(fi_close(&pep_eq_->fid), 0);
        }
        for (fid_mr *mr : mrs_) EXPECT_EQ(fi_close(&mr->fid), 0);
        if (domain_) {
            EXPECT_EQ(fi_close(&domain_->fid), 0);
        }
        if (fabric_) {
            EXPECT_EQ(fi_close(&fabric_->fid), 0);
        }
        if (info_) fi_freeinfo(info_);
    }

    void close_side(Side &s) {
        if (s.ep) {
            EXPECT_EQ(fi_close(&s.ep->fid), 0);
        }
        if (s.cq) {
            EXPECT_EQ(fi_close(&s.cq->fid), 0);
        }
        if (s.eq) {
            EXPECT_EQ(fi_close(&s.eq->fid), 0);
        }
        s = Side{};
    }

    // An endpoint of `info` with its own EQ and CQ, enabled.
    void open_side(Side &s, fi_info *info) {
        fi_eq_attr eq_attr{};
        eq_attr.wait_obj = FI_WAIT_UNSPEC;
        ASSERT_EQ(fi_eq_open(fabric_, &eq_attr, &s.eq, nullptr), 0);
        fi_cq_attr cq_attr{};
        cq_attr.format = FI_CQ_FORMAT_TAGGED;
        ASSERT_EQ(fi_cq_open(domain_, &cq_attr, &s.cq, nullptr), 0);
        ASSERT_EQ(fi_endpoint(domain_, info, &s.ep, nullptr), 0);
        ASSERT_EQ(fi_ep_bind(s.ep, &s.eq->fid, 0), 0);
        ASSERT_EQ(fi_ep_bind(s.ep, &s.cq->fid, FI_TRANSMIT | FI_RECV), 0);
        if (shared_rx_ != nullptr) {
            ASSERT_EQ(fi_ep_bind(s.ep, &shared_rx_->fid, 0), 0);
        }
        ASSERT_EQ(fi_enable(s.ep), 0);
    }

    // The client's info: the listener's address as its destination.
    fi_info *client_info(uint16_t port) {
        fi_info *hints = fi_allocinfo();
        hints->ep_attr->type = FI_EP_MSG;
        hints->caps = FI_MSG | FI_TAGGED | FI_RMA;
        hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
        hints->domain_attr->name = strdup(info_->domain_attr->name);  // (the domain both use)
        fi_info *out = nullptr;
        EXPECT_EQ(fi_getinfo(FI_VERSION(2, 0), "127.0.0.1", std::to_string(port).c_str(), 0, hints, &out), 0);
        fi_freeinfo(hints);
        return out;
    }

    // The next event of `eq` (its bytes in `buf`), reading the other EQs with FI_PEEK meanwhile
    // so that their connections progress. Its type, or a negative error (-FI_EAVAIL: an error
    // event is at the head).
    ssize_t next_event(fid_eq *eq, uint32_t &event, std::vector<uint8_t> &buf) {
        buf.assign(4096, 0);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
        while (std::chrono::steady_clock::now() < deadline) {
            const ssize_t rc = fi_eq_read(eq, &event, buf.data(), buf.size(), 0);
            if (rc != -FI_EAGAIN) {
                if (rc > 0) buf.resize(static_cast<size_t>(rc));
                return rc;
            }
            for (fid_eq *other : {pep_eq_, client_.eq, server_.eq}) {
                uint32_t e;
                uint8_t peek[512];
                if (other != nullptr && other != eq) (void)fi_eq_read(other, &e, peek, sizeof peek, FI_PEEK);
            }
            progress_cqs();
        }
        return -FI_ETIMEDOUT;
    }

    void progress_cqs() {
        fi_cq_tagged_entry none;
        for (Side *s : {&client_, &server_}) {
            if (s->cq) (void)fi_cq_read(s->cq, &none, 0);
        }
    }

    ssize_t wait_cq(fid_cq *cq, fi_cq_tagged_entry &e) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
        while (std::chrono::steady_clock::now() < deadline) {
            const ssize_t rc = fi_cq_read(cq, &e, 1);
            if (rc != -FI_EAGAIN) return rc;
            progress_cqs();
        }
        return -FI_ETIMEDOUT;
    }

    size_t cm_data_size() {
        size_t v = 0, len = sizeof v;
        EXPECT_EQ(fi_getopt(&pep_->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &v, &len), 0);
        return v;
    }

    // Client connects with `hello`, the server accepts with `answer`; both connected.
    void connect_pair(const std::vector<uint8_t> &hello, const std::vector<uint8_t> &answer) {
        fi_info *ci = client_info(port_);
        ASSERT_NE(ci, nullptr);
        open_side(client_, ci);
        ASSERT_EQ(fi_connect(client_.ep, ci->dest_addr, hello.data(), hello.size()), 0);
        fi_freeinfo(ci);
        uint32_t event = 0;
        std::vector<uint8_t> buf;
        ASSERT_GT(next_event(pep_eq_, event, buf), 0);
        ASSERT_EQ(event, uint32_t{FI_CONNREQ});
        fi_eq_cm_entry entry;
        std::memcpy(&entry, buf.data(), sizeof entry);
        EXPECT_EQ(entry.fid, &pep_->fid);
        ASSERT_NE(entry.info, nullptr);
        ASSERT_NE(entry.info->handle, nullptr);
        EXPECT_EQ(std::vector<uint8_t>(buf.begin() + sizeof entry, buf.end()), hello);
        open_side(server_, entry.info);
        ASSERT_EQ(fi_accept(server_.ep, answer.data(), answer.size()), 0);
        fi_freeinfo(entry.info);
        ASSERT_GT(next_event(client_.eq, event, buf), 0);
        ASSERT_EQ(event, uint32_t{FI_CONNECTED});
        std::memcpy(&entry, buf.data(), sizeof entry);
        EXPECT_EQ(entry.fid, &client_.ep->fid);
        EXPECT_EQ(std::vector<uint8_t>(buf.begin() + sizeof entry, buf.end()), answer);
        ASSERT_GT(next_event(server_.eq, event, buf), 0);
        ASSERT_EQ(event, uint32_t{FI_CONNECTED});
        std::memcpy(&entry, buf.data(), sizeof entry);
        EXPECT_EQ(entry.fid, &server_.ep->fid);
    }

    // `n` bytes from one side to the other, untagged or tagged, checked.
    void message(Side &from, Side &to, size_t n, bool tagged) {
        const auto out = pattern(n, static_cast<uint8_t>(n + tagged));
        std::vector<uint8_t> in(n + 16, 0);
        fi_cq_tagged_entry e{};
        if (tagged) {
            ASSERT_EQ(fi_trecv(to.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, 9, 0, nullptr), 0);
        } else {
            ASSERT_EQ(fi_recv(to.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, nullptr), 0);
        }
        ssize_t rc;
        do {
            rc = tagged ? fi_tsend(from.ep, out.data(), n, nullptr, FI_ADDR_NOTAVAIL, 9, nullptr)
                        : fi_send(from.ep, out.data(), n, nullptr, FI_ADDR_NOTAVAIL, nullptr);
            if (rc == -FI_EAGAIN) progress_cqs();
        } while (rc == -FI_EAGAIN);
        ASSERT_EQ(rc, 0);
        ASSERT_EQ(wait_cq(to.cq, e), 1) << n << " B";
        EXPECT_EQ(e.len, n);
        EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin())) << n << " B";
        ASSERT_EQ(wait_cq(from.cq, e), 1);
    }

    fi_info *info_ = nullptr;
    fid_fabric *fabric_ = nullptr;
    fid_domain *domain_ = nullptr;
    fid_eq *pep_eq_ = nullptr;
    fid_pep *pep_ = nullptr;
    uint16_t port_ = 0;
    fid_ep *shared_rx_ = nullptr;  // bound by open_side where set
    Side client_, server_;
    std::vector<fid_mr *> mrs_;
};

TEST_F(MsgEpTest, ConnectAcceptDataBothWaysAndShutdown) {
    const size_t most = cm_data_size();
    ASSERT_GE(most, 256u);
    ASSERT_NO_FATAL_FAILURE(connect_pair(pattern(most, 1), pattern(most, 2)));
    // Active endpoints report the same size (fabtests' fi_cm_data asks its endpoint), read-only.
    for (Side *s : {&client_, &server_}) {
        size_t v = 0, len = sizeof v;
        EXPECT_EQ(fi_getopt(&s->ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &v, &len), 0);
        EXPECT_EQ(v, most);
        EXPECT_EQ(fi_setopt(&s->ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &v, sizeof v), -FI_ENOPROTOOPT);
    }
    for (const bool tagged : {false, true}) {
        for (size_t n : {size_t{0}, size_t{8}, size_t{4000}, size_t{300000}}) {
            message(client_, server_, n, tagged);
            message(server_, client_, n, tagged);
        }
    }
    // RMA: the client writes into the server's registered buffer and reads it back.
    std::vector<uint8_t> target(65536, 0);
    fid_mr *mr = nullptr;
    ASSERT_EQ(fi_mr_reg(domain_, target.data(), target.size(), FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 0, 0, &mr,
                        nullptr),
              0);
    mrs_.push_back(mr);
    const auto src = pattern(target.size(), 7);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(fi_write(client_.ep, src.data(), src.size(), nullptr, FI_ADDR_NOTAVAIL,
                       reinterpret_cast<uint64_t>(target.data()), fi_mr_key(mr), nullptr),
              0);
    ASSERT_EQ(wait_cq(client_.cq, e), 1);
    EXPECT_EQ(target, src);
    std::vector<uint8_t> back(target.size(), 0);
    ASSERT_EQ(fi_read(client_.ep, back.data(), back.size(), nullptr, FI_ADDR_NOTAVAIL,
                      reinterpret_cast<uint64_t>(target.data()), fi_mr_key(mr), nullptr),
              0);
    ASSERT_EQ(wait_cq(client_.cq, e), 1);
    EXPECT_EQ(back, src);

    sockaddr_in peer{};
    size_t len = sizeof peer;
    ASSERT_EQ(fi_getpeer(client_.ep, &peer, &len), 0);
    EXPECT_EQ(ntohs(peer.sin_port), port_);

    // The client shuts down: the server hears of it, and so does the client's own EQ (as
    // libfabric's verbs and tcp providers report it), once each.
    ASSERT_EQ(fi_shutdown(client_.ep, 0), 0);
    for (Side *s : {&server_, &client_}) {
        uint32_t event = 0;
        std::vector<uint8_t> buf;
        ASSERT_GT(next_event(s->eq, event, buf), 0);
        EXPECT_EQ(event, uint32_t{FI_SHUTDOWN});
        fi_eq_cm_entry entry;
        std::memcpy(&entry, buf.data(), sizeof entry);
        EXPECT_EQ(entry.fid, &s->ep->fid);
    }
    uint32_t event = 0;
    uint8_t more[64];
    for (int i = 0; i < 100; ++i) {
        for (Side *s : {&server_, &client_}) EXPECT_EQ(fi_eq_read(s->eq, &event, more, sizeof more, 0), -FI_EAGAIN);
    }
}

TEST_F(MsgEpTest, ARefusalCarriesTheServersData) {
    fi_info *ci = client_info(port_);
    ASSERT_NE(ci, nullptr);
    open_side(client_, ci);
    const auto hello = pattern(16, 3);
    // (No address: the info's dest_addr, which fabtests relies on.)
    ASSERT_EQ(fi_connect(client_.ep, nullptr, hello.data(), hello.size()), 0);
    fi_freeinfo(ci);
    uint32_t event = 0;
    std::vector<uint8_t> buf;
    ASSERT_GT(next_event(pep_eq_, event, buf), 0);
    ASSERT_EQ(event, uint32_t{FI_CONNREQ});
    fi_eq_cm_entry entry;
    std::memcpy(&entry, buf.data(), sizeof entry);
    const auto why = pattern(cm_data_size(), 4);
    ASSERT_EQ(fi_reject(pep_, entry.info->handle, why.data(), why.size()), 0);
    fi_freeinfo(entry.info);
    ASSERT_EQ(next_event(client_.eq, event, buf), -FI_EAVAIL);
    std::vector<uint8_t> err_data(why.size() + 64, 0);
    fi_eq_err_entry err{};
    err.err_data = err_data.data();
    err.err_data_size = err_data.size();
    ASSERT_GT(fi_eq_readerr(client_.eq, &err, 0), 0);
    EXPECT_EQ(err.err, FI_ECONNREFUSED);
    EXPECT_EQ(err.fid, &client_.ep->fid);
    ASSERT_EQ(err.err_data_size, why.size());
    EXPECT_EQ(std::memcmp(err.err_data, why.data(), why.size()), 0);
}

TEST_F(MsgEpTest, TooMuchDataAndNoListenerGiveTheirErrors) {
    fi_info *ci = client_info(port_);
    ASSERT_NE(ci, nullptr);
    open_side(client_, ci);
    const auto big = pattern(cm_data_size() + 1, 5);
    EXPECT_EQ(fi_connect(client_.ep, ci->dest_addr, big.data(), big.size()), -FI_EINVAL);
    // Nobody listens any more: the connection attempt fails on the EQ.
    ASSERT_EQ(fi_close(&pep_->fid), 0);
    pep_ = nullptr;
    ASSERT_EQ(fi_connect(client_.ep, ci->dest_addr, nullptr, 0), 0);
    fi_freeinfo(ci);
    uint32_t event = 0;
    std::vector<uint8_t> buf;
    ASSERT_EQ(next_event(client_.eq, event, buf), -FI_EAVAIL);
    fi_eq_err_entry err{};
    ASSERT_GT(fi_eq_readerr(client_.eq, &err, 0), 0);
    EXPECT_TRUE(err.err == FI_ECONNREFUSED || err.err == FI_EHOSTUNREACH) << err.err;
}

// Endpoints closed in the middle of connecting, on either side, leave nothing behind that
// crashes or hangs: the client before any answer, the server's request refused by closing the
// passive endpoint, a server endpoint closed after accepting.
TEST_F(MsgEpTest, ClosingWhileConnectingIsSafe) {
    for (int round = 0; round < 3; ++round) {
        fi_info *ci = client_info(port_);
        ASSERT_NE(ci, nullptr);
        open_side(client_, ci);
        const uint8_t mark = static_cast<uint8_t>(round);
        ASSERT_EQ(fi_connect(client_.ep, ci->dest_addr, &mark, 1), 0);
        fi_freeinfo(ci);
        if (round == 0) {
            close_side(client_);  // before the server saw anything (its request may still come)
            continue;
        }
        uint32_t event = 0;
        std::vector<uint8_t> buf;
        fi_eq_cm_entry entry;
        for (;;) {  // this round's request; an earlier round's is refused, as a server would
            ASSERT_GT(next_event(pep_eq_, event, buf), 0);
            ASSERT_EQ(event, uint32_t{FI_CONNREQ});
            ASSERT_EQ(buf.size(), sizeof entry + 1);
            std::memcpy(&entry, buf.data(), sizeof entry);
            if (buf[sizeof entry] == mark) break;
            (void)fi_reject(pep_, entry.info->handle, nullptr, 0);  // (that client is gone)
            fi_freeinfo(entry.info);
        }
        if (round == 1) {
            open_side(server_, entry.info);
            ASSERT_EQ(fi_accept(server_.ep, nullptr, 0), 0);
            fi_freeinfo(entry.info);
            close_side(server_);  // accepted, then gone: the client hears of it
            ASSERT_NE(next_event(client_.eq, event, buf), -FI_ETIMEDOUT);
            close_side(client_);
        } else {
            fi_freeinfo(entry.info);
            close_side(client_);  // the request is still pending at the server
        }
    }
}

// A request has one owner at a time: fi_close of a pending one refuses it; an endpoint opened
// from one owns it (fi_reject and fi_close of the handle: -FI_EBUSY; a second endpoint from
// it: -FI_EINVAL), and closing that endpoint unaccepted refuses it; a handle whose passive
// endpoint closed is stale (-FI_EINVAL), never read.
TEST_F(MsgEpTest, ARequestHasOneOwner) {
    auto request = [&](uint8_t mark, fi_eq_cm_entry &entry) {
        fi_info *ci = client_info(port_);
        ASSERT_NE(ci, nullptr);
        open_side(client_, ci);
        ASSERT_EQ(fi_connect(client_.ep, ci->dest_addr, &mark, 1), 0);
        fi_freeinfo(ci);
        uint32_t event = 0;
        std::vector<uint8_t> buf;
        ASSERT_GT(next_event(pep_eq_, event, buf), 0);
        ASSERT_EQ(event, uint32_t{FI_CONNREQ});
        ASSERT_EQ(buf.size(), sizeof entry + 1);
        ASSERT_EQ(buf[sizeof entry], mark);
        std::memcpy(&entry, buf.data(), sizeof entry);
    };
    auto client_refused = [&] {
        uint32_t event = 0;
        std::vector<uint8_t> buf;
        ASSERT_EQ(next_event(client_.eq, event, buf), -FI_EAVAIL);
        fi_eq_err_entry err{};
        ASSERT_GT(fi_eq_readerr(client_.eq, &err, 0), 0);
        EXPECT_EQ(err.err, FI_ECONNREFUSED);
        close_side(client_);
    };
    fi_eq_cm_entry entry;
    // Pending, closed by the application: refused.
    request(1, entry);
    EXPECT_EQ(fi_close(entry.info->handle), 0);
    fi_freeinfo(entry.info);
    client_refused();
    // Taken by an endpoint: its owner now; closing the endpoint unaccepted refuses it.
    request(2, entry);
    open_side(server_, entry.info);
    fid_ep *second = nullptr;
    EXPECT_EQ(fi_endpoint(domain_, entry.info, &second, nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_reject(pep_, entry.info->handle, nullptr, 0), -FI_EBUSY);
    EXPECT_EQ(fi_close(entry.info->handle), -FI_EBUSY);
    close_side(server_);
    fi_freeinfo(entry.info);
    client_refused();
    // Pending when its passive endpoint closes: refused, and the handle is stale.
    request(3, entry);
    ASSERT_EQ(fi_close(&pep_->fid), 0);
    pep_ = nullptr;
    EXPECT_EQ(fi_endpoint(domain_, entry.info, &second, nullptr), -FI_EINVAL);
    fi_freeinfo(entry.info);
    client_refused();
}

// An active endpoint that takes over a passive endpoint's address (hints->handle naming the
// passive endpoint, as fabtests' fi_msg_sockets does): fi_getinfo's answer carries the handle
// and the address, the endpoint's fi_getname is that address before and after connecting, the
// server sees the connection come from it, and the accepting endpoint's name is its listener's.
TEST_F(MsgEpTest, AnEndpointTakesOverAPassiveEndpointsAddress) {
    // A port nobody listens on: the kernel's pick for a socket closed at once.
    sockaddr_in bound{};
    {
        const int fd = socket(AF_INET, SOCK_STREAM, 0);
        ASSERT_GE(fd, 0);
        bound.sin_family = AF_INET;
        bound.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof bound;
        ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr *>(&bound), sizeof bound), 0);
        ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr *>(&bound), &len), 0);
        close(fd);
    }
    fid_pep *source = nullptr;
    ASSERT_EQ(fi_passive_ep(fabric_, info_, &source, nullptr), 0);
    ASSERT_EQ(fi_setname(&source->fid, &bound, sizeof bound), 0);
    fi_info *hints = fi_allocinfo();
    hints->ep_attr->type = FI_EP_MSG;
    hints->caps = FI_MSG | FI_TAGGED | FI_RMA;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->name = strdup(info_->domain_attr->name);
    hints->handle = &source->fid;
    fi_info *ci = nullptr;
    hints->ep_attr->type = FI_EP_RDM;
    EXPECT_EQ(fi_getinfo(FI_VERSION(2, 0), "127.0.0.1", std::to_string(port_).c_str(), 0, hints, &ci), -FI_ENODATA)
        << "a passive endpoint serves connected endpoints only";
    fid fake{};
    fake.fclass = FI_CLASS_PEP;
    hints->handle = &fake;
    hints->ep_attr->type = FI_EP_MSG;
    ASSERT_EQ(fi_getinfo(FI_VERSION(2, 0), "127.0.0.1", std::to_string(port_).c_str(), 0, hints, &ci), 0);
    EXPECT_EQ(ci->handle, nullptr) << "not ufi's passive endpoint: not taken over (and never read)";
    EXPECT_FALSE(ci->src_addrlen == sizeof bound && std::memcmp(ci->src_addr, &bound, sizeof bound) == 0)
        << "nor its address";
    fi_freeinfo(ci);
    ci = nullptr;
    hints->handle = &source->fid;
    ASSERT_EQ(fi_getinfo(FI_VERSION(2, 0), "127.0.0.1", std::to_string(port_).c_str(), 0, hints, &ci), 0);
    hints->handle = nullptr;
    fi_freeinfo(hints);
    EXPECT_EQ(ci->handle, &source->fid);
    ASSERT_EQ(ci->src_addrlen, sizeof bound);
    EXPECT_EQ(std::memcmp(ci->src_addr, &bound, sizeof bound), 0);
    open_side(client_, ci);
    ASSERT_EQ(fi_close(&source->fid), 0);  // (fabtests closes it before connecting)
    auto name_of = [](fid_ep *ep) {
        sockaddr_storage ss{};
        size_t len = sizeof ss;
        EXPECT_EQ(fi_getname(&ep->fid, &ss, &len), 0);
        return std::vector<uint8_t>(reinterpret_cast<uint8_t *>(&ss), reinterpret_cast<uint8_t *>(&ss) + len);
    };
    const std::vector<uint8_t> want(reinterpret_cast<uint8_t *>(&bound),
                                    reinterpret_cast<uint8_t *>(&bound) + sizeof bound);
    EXPECT_EQ(name_of(client_.ep), want) << "before connecting";
    ASSERT_EQ(fi_connect(client_.ep, ci->dest_addr, nullptr, 0), 0);
    fi_freeinfo(ci);
    uint32_t event = 0;
    std::vector<uint8_t> buf;
    ASSERT_GT(next_event(pep_eq_, event, buf), 0);
    ASSERT_EQ(event, uint32_t{FI_CONNREQ});
    fi_eq_cm_entry entry;
    std::memcpy(&entry, buf.data(), sizeof entry);
    open_side(server_, entry.info);
    ASSERT_EQ(fi_accept(server_.ep, nullptr, 0), 0);
    fi_freeinfo(entry.info);
    ASSERT_GT(next_event(client_.eq, event, buf), 0);
    ASSERT_EQ(event, uint32_t{FI_CONNECTED});
    ASSERT_GT(next_event(server_.eq, event, buf), 0);
    ASSERT_EQ(event, uint32_t{FI_CONNECTED});
    EXPECT_EQ(name_of(client_.ep), want) << "after connecting";
    sockaddr_in peer{};
    size_t len = sizeof peer;
    ASSERT_EQ(fi_getpeer(server_.ep, &peer, &len), 0);
    EXPECT_EQ(peer.sin_port, bound.sin_port) << "the connection comes from the taken-over address";
    sockaddr_in listening{};
    len = sizeof listening;
    ASSERT_EQ(fi_getname(&pep_->fid, &listening, &len), 0);
    const auto server_name = name_of(server_.ep);
    ASSERT_EQ(server_name.size(), sizeof listening);
    EXPECT_EQ(std::memcmp(server_name.data(), &listening, sizeof listening), 0)
        << "an accepted endpoint's name is its listener's";
    message(client_, server_, 64, true);
    message(server_, client_, 64, false);
}

// Both ends of a connection in one domain bound to one shared receive context: receives
// posted to it serve whichever endpoint a message reaches, and complete in that endpoint's CQ.
TEST_F(MsgEpTest, ConnectedEndpointsShareAReceiveContext) {
    ASSERT_EQ(fi_srx_context(domain_, info_->rx_attr, &shared_rx_, nullptr), 0);
    connect_pair({1}, {2});
    std::vector<uint8_t> r1(64, 0), r2(64, 0);
    ASSERT_EQ(fi_trecv(shared_rx_, r1.data(), r1.size(), nullptr, FI_ADDR_UNSPEC, 0, ~0ULL, &r1), 0);
    ASSERT_EQ(fi_trecv(shared_rx_, r2.data(), r2.size(), nullptr, FI_ADDR_UNSPEC, 0, ~0ULL, &r2), 0);
    const auto to_server = pattern(40, 5), to_client = pattern(24, 6);
    auto send = [&](Side &from, const std::vector<uint8_t> &out, uint64_t tag) {
        ssize_t rc;
        do {
            rc = fi_tsend(from.ep, out.data(), out.size(), nullptr, FI_ADDR_NOTAVAIL, tag, nullptr);
            if (rc == -FI_EAGAIN) progress_cqs();
        } while (rc == -FI_EAGAIN);
        ASSERT_EQ(rc, 0);
    };
    send(client_, to_server, 5);
    send(server_, to_client, 6);
    // Each CQ holds its endpoint's send and receive completions, in either order.
    for (Side *side : {&server_, &client_}) {
        const bool server = side == &server_;
        const auto &want = server ? to_server : to_client;
        int received = 0, sent = 0;
        for (int i = 0; i < 2; ++i) {
            fi_cq_tagged_entry e{};
            ASSERT_EQ(wait_cq(side->cq, e), 1) << (server ? "server" : "client");
            if ((e.flags & FI_RECV) == 0) {
                ++sent;
                continue;
            }
            ++received;
            EXPECT_EQ(e.tag, server ? 5u : 6u) << "the completion is in its endpoint's CQ";
            ASSERT_EQ(e.len, want.size());
            const auto &into = e.op_context == &r1 ? r1 : r2;
            EXPECT_TRUE(std::equal(want.begin(), want.end(), into.begin()));
        }
        EXPECT_EQ(received, 1);
        EXPECT_EQ(sent, 1);
    }
    EXPECT_EQ(fi_close(&shared_rx_->fid), -FI_EBUSY) << "endpoints are bound to it";
}

}  // namespace
}  // namespace ufi::msg_test
