// Hostile and careless input to the AV calls, each case a crash or wrong answer found by trying
// ufi the way a careless or hostile caller would: every single-byte change and every
// truncation of a real endpoint address given to fi_av_insert and fi_av_straddr (each in a
// slot that ends at an unmapped page, so a read past the domain's address length faults),
// FI_ADDR_STR strings in both layouts programs use, fi_addr_t bits the AV gives no meaning,
// and services that are no port.
#include "av_fixture.h"

#include "base/log/log.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

namespace ufi::av_test {
namespace {

// `len` bytes that end exactly where an inaccessible page begins.
class GuardedSlot {
  public:
    explicit GuardedSlot(size_t len) : len_(len) {
        page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        const size_t pages = (len + page_ - 1) / page_ + 1;
        map_len_ = pages * page_;
        base_ = static_cast<uint8_t *>(
            mmap(nullptr, map_len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        EXPECT_NE(base_, MAP_FAILED);
        EXPECT_EQ(mprotect(base_ + map_len_ - page_, page_, PROT_NONE), 0);
    }
    ~GuardedSlot() { munmap(base_, map_len_); }
    uint8_t *data() { return base_ + map_len_ - page_ - len_; }
    void fill(const std::vector<uint8_t> &bytes) {
        std::memset(data(), 0, len_);
        if (!bytes.empty()) std::memcpy(data(), bytes.data(), std::min(bytes.size(), len_));
    }

  private:
    size_t len_;
    size_t page_ = 0;
    size_t map_len_ = 0;
    uint8_t *base_ = nullptr;
};

class AvHostileTest : public AvTest {
  protected:
    void TearDown() override {
        for (fid_t f : {ep_ ? &ep_->fid : nullptr, cq_ ? &cq_->fid : nullptr,
                        ep_av_ ? &ep_av_->fid : nullptr}) {
            if (f != nullptr) {
                EXPECT_EQ(fi_close(f), 0);
            }
        }
        AvTest::TearDown();
    }

    // The name of a real, enabled endpoint of this domain, as fi_getname gives it.
    std::vector<uint8_t> real_address() {
        fi_av_attr av_attr{};
        fi_cq_attr cq_attr{};
        EXPECT_EQ(fi_av_open(domain_, &av_attr, &ep_av_, nullptr), 0);
        EXPECT_EQ(fi_cq_open(domain_, &cq_attr, &cq_, nullptr), 0);
        EXPECT_EQ(fi_endpoint(domain_, info_, &ep_, nullptr), 0);
        EXPECT_EQ(fi_ep_bind(ep_, &ep_av_->fid, 0), 0);
        EXPECT_EQ(fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV), 0);
        EXPECT_EQ(fi_enable(ep_), 0);
        std::vector<uint8_t> name(4096);
        size_t len = name.size();
        EXPECT_EQ(fi_getname(&ep_->fid, name.data(), &len), 0);
        name.resize(len);
        return name;
    }

    // Inserts the slot's address with FI_SYNC_ERR and reads it back with fi_av_straddr.
    // Checks the insert judged it as `accept` says (inserted: 1, rejected: 0), that the two
    // calls agree and that nothing else is reported than a count and a per-entry status.
    // Returns whether the insert accepted it.
    bool try_address(fid_av *av, GuardedSlot &slot, bool accept) {
        fi_addr_t out = 0;
        int status = -1;
        const int rc = fi_av_insert(av, slot.data(), 1, &out, FI_SYNC_ERR, &status);
        EXPECT_EQ(rc, accept ? 1 : 0) << (accept ? "rejected" : "accepted");
        EXPECT_EQ(status, rc == 1 ? 0 : FI_EINVAL);
        EXPECT_EQ(out == FI_ADDR_NOTAVAIL, rc == 0);
        char text[1024];
        size_t len = sizeof text;
        const char *s = fi_av_straddr(av, slot.data(), text, &len);
        EXPECT_EQ(s != nullptr, rc == 1) << "straddr and insert judge alike";
        if (rc == 1) {
            EXPECT_EQ(fi_av_remove(av, &out, 1, 0), 0);
        }
        return rc == 1;
    }

    fid_av *ep_av_ = nullptr;
    fid_cq *cq_ = nullptr;
    fid_ep *ep_ = nullptr;
};

TEST_F(AvHostileTest, EveryByteChangeAndTruncationOfARealAddress) {
    open_domain();
    const std::vector<uint8_t> name = real_address();
    ASSERT_EQ(name.size(), addr_len());
    const size_t content = address::content_size(name.data(), name.size());
    ASSERT_GT(content, address::kHeaderSize);
    fid_av *av = open_av();
    GuardedSlot slot(addr_len());
    const log::Level saved = log::level();
    log::set_level(log::Level::Error);  // thousands of rejections, each with its WARN line

    slot.fill(name);
    EXPECT_TRUE(try_address(av, slot, true)) << "the real address itself";
    int rejected = 0, total = 0;
    for (size_t i = 0; i < addr_len(); ++i) {
        for (int bit = 0; bit < 8; ++bit) {
            auto bad = name;
            bad[i] ^= static_cast<uint8_t>(1u << bit);
            slot.fill(bad);
            rejected += !try_address(av, slot, false);
            ++total;
        }
        for (uint8_t v : {uint8_t{0}, uint8_t{0xff}}) {
            if (name[i] == v) continue;
            auto bad = name;
            bad[i] = v;
            slot.fill(bad);
            rejected += !try_address(av, slot, false);
            ++total;
        }
    }
    EXPECT_EQ(rejected, total) << "the checksum and the padding rule catch every byte change";

    // Cut after `keep` bytes, the rest of the slot zero (an application that copied too
    // little into a zeroed buffer), and the bare prefix at the very end of the mapping.
    for (size_t keep = 0; keep < content; ++keep) {
        std::vector<uint8_t> cut(name.begin(), name.begin() + static_cast<long>(keep));
        slot.fill(cut);
        const bool same = std::all_of(name.begin() + static_cast<long>(keep), name.end(),
                                      [](uint8_t b) { return b == 0; });
        EXPECT_EQ(try_address(av, slot, same), same) << "kept " << keep;
    }
    log::set_level(saved);
}

TEST_F(AvHostileTest, FixedStrideBoundsEveryRead) {
    open_domain();
    const std::vector<uint8_t> name = real_address();
    fid_av *av = open_av();
    // Three addresses, the last one's slot ending at the guard page: the call reads exactly
    // 3 * addr_len bytes whatever the addresses claim.
    GuardedSlot slot(3 * addr_len());
    std::vector<uint8_t> three(3 * addr_len(), 0);
    std::copy(name.begin(), name.end(), three.begin());
    std::copy(name.begin(), name.end(), three.begin() + static_cast<long>(2 * addr_len()));
    three[addr_len()] = 'u';
    three[addr_len() + 1] = 'f';
    three[addr_len() + 2] = address::kVersion;
    three[addr_len() + 3] = 32;  // 32 records claimed; the first claims 510 address bytes
    const uint8_t record[] = {3, 't', 'c', 'p', 255, 255};
    std::copy(std::begin(record), std::end(record),
              three.begin() + static_cast<long>(addr_len() + address::kHeaderSize));
    slot.fill(three);
    fi_addr_t out[3];
    int status[3];
    WarnCapture w;
    EXPECT_EQ(fi_av_insert(av, slot.data(), 3, out, FI_SYNC_ERR, status), 2);
    EXPECT_EQ(status[0], 0);
    EXPECT_EQ(status[1], FI_EINVAL);
    EXPECT_EQ(status[2], 0) << "the entry after a malformed one is judged on its own";
    EXPECT_EQ(w.count(), 1u) << w.text();
    EXPECT_TRUE(w.contains("runs past")) << w.text();
}

TEST_F(AvHostileTest, StringsAsPointerArrayOrBackToBack) {
    open_domain({.str_format = true});
    fid_av *av = open_av();
    std::vector<std::string> strs;
    for (int i = 0; i < 3; ++i) {
        const auto b = trimmed(make_blob(i));
        strs.push_back(address::to_string(b.data(), b.size()));
    }
    // The page's layout: an array of pointers.
    const char *ptrs[3] = {strs[0].c_str(), strs[1].c_str(), strs[2].c_str()};
    fi_addr_t out[3];
    ASSERT_EQ(fi_av_insert(av, ptrs, 3, out, 0, nullptr), 3);
    // libfabric's shm provider's layout: NUL-terminated strings back to back, here ending at
    // the guard page, with a malformed one in the middle.
    std::string packed = strs[0] + '\0' + "fi_ufi://garbage" + '\0' + strs[2] + '\0';
    GuardedSlot slot(packed.size());
    std::memcpy(slot.data(), packed.data(), packed.size());
    int status[3];
    {
        WarnCapture w;
        ASSERT_EQ(fi_av_insert(av, slot.data(), 3, out, FI_SYNC_ERR, status), 2);
        EXPECT_EQ(w.count(), 1u);
    }
    EXPECT_EQ(status[0], 0);
    EXPECT_EQ(status[1], FI_EINVAL);
    EXPECT_EQ(status[2], 0);
    char text[512];
    size_t len = sizeof text;
    ASSERT_EQ(fi_av_lookup(av, out[2], text, &len), 0);
    EXPECT_EQ(std::string(text), strs[2]);
    // A string with no NUL within the domain's longest address string: rejected after
    // reading that many characters and no more (the slot ends one byte later).
    const size_t max = address::kStringPrefix.size() + (addr_len() * 4 + 2) / 3;
    std::string endless = "fi_ufi://" + std::string(max + 1 - 9, 'A');
    GuardedSlot slot2(endless.size());
    std::memcpy(slot2.data(), endless.data(), endless.size());
    {
        WarnCapture w;
        EXPECT_EQ(fi_av_insert(av, slot2.data(), 2, out, FI_SYNC_ERR, status), 0);
        EXPECT_EQ(status[0], FI_EINVAL);
        EXPECT_EQ(status[1], FI_EINVAL) << "where a second string would start is unknown";
        EXPECT_TRUE(w.contains("no NUL within")) << w.text();
        len = sizeof text;
        EXPECT_EQ(fi_av_straddr(av, slot2.data(), text, &len), nullptr);
    }
}

// AV-33: a packed-strings buffer whose first entry does not start with "fi_ufi:/" was taken
// for a char ** array and its bytes dereferenced. Garbage of every shape (text, short strings
// with a NUL early, bytes whose top ones are not zero) is now read as packed strings, each
// refused with FI_EINVAL; an array of pointers still works, and a pointer in it that cannot
// be one is refused without being followed.
TEST_F(AvHostileTest, GarbageStringsAreNeverTakenForPointers) {
    open_domain({.str_format = true});
    fid_av *av = open_av();
    const auto b = trimmed(make_blob(4));
    const std::string good = address::to_string(b.data(), b.size());
    const std::vector<std::string> garbage = {
        std::string("garbage!\0", 9),                  // text: no NUL in the first 8 bytes
        std::string("ab\0cdefg\0", 10),               // a NUL early, text after it
        std::string("\x01\x02\x03\x04\x05\x06\x07\x08\0", 9),  // no NUL, no pointer
        std::string("\x10\0\0\0\0\0\0\0", 8),          // 16: below any mapping
        std::string("\0\0\0\0\0\0\x80\x7f", 8),         // above user space
    };
    for (const std::string &g : garbage) {
        SCOPED_TRACE(testing::PrintToString(g));
        const std::string packed = g + good + '\0';
        GuardedSlot slot(packed.size());
        std::memcpy(slot.data(), packed.data(), packed.size());
        fi_addr_t out[2] = {FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL};
        int status[2] = {-1, -1};
        WarnCapture w;
        // The entry after a malformed one is judged on its own where its start is known.
        const int n = fi_av_insert(av, slot.data(), 2, out, FI_SYNC_ERR, status);
        EXPECT_EQ(status[0], FI_EINVAL);
        EXPECT_EQ(out[0], FI_ADDR_NOTAVAIL);
        EXPECT_EQ(n, status[1] == 0 ? 1 : 0);
    }
    // A pointer array whose second entry is no pointer: the first goes in, the second is
    // refused unread.
    const char *ptrs[2] = {good.c_str(), reinterpret_cast<const char *>(uintptr_t{0x20})};
    fi_addr_t out[2];
    int status[2] = {-1, -1};
    WarnCapture w;
    EXPECT_EQ(fi_av_insert(av, ptrs, 2, out, FI_SYNC_ERR, status), 1);
    EXPECT_EQ(status[0], 0);
    EXPECT_EQ(status[1], FI_EINVAL);
    EXPECT_TRUE(w.contains("no user-space pointer")) << w.text();
}

TEST_F(AvHostileTest, BitsTheAvGivesNoMeaning) {
    open_domain();
    for (int rx_bits : {0, 8}) {
        fi_av_attr attr{};
        attr.rx_ctx_bits = rx_bits;
        fid_av *av = open_av(attr);
        const auto b = make_blob(1);
        fi_addr_t a = 0;
        ASSERT_EQ(fi_av_insert(av, b.data(), 1, &a, 0, nullptr), 1);
        std::vector<uint8_t> buf(addr_len());
        for (int bit = 32; bit < 64; ++bit) {
            const fi_addr_t x = a | (fi_addr_t{1} << bit);
            const bool meaningful = rx_bits > 0 && bit >= 64 - rx_bits;
            size_t len = buf.size();
            EXPECT_EQ(fi_av_lookup(av, x, buf.data(), &len), meaningful ? 0 : -FI_EINVAL)
                << "rx_ctx_bits " << rx_bits << " bit " << bit;
            len = buf.size();
            EXPECT_EQ(fi_av_lookup2(av, x, buf.data(), &len, 0, nullptr),
                      meaningful ? 0 : -FI_EINVAL);
            EXPECT_EQ(fi_av_remove(av, const_cast<fi_addr_t *>(&x), 1, 0), -FI_EINVAL)
                << "removal takes the entry's own fi_addr";
        }
        // An rx-context address of an entry reads the entry.
        if (rx_bits > 0) {
            size_t len = buf.size();
            ASSERT_EQ(fi_av_lookup(av, fi_rx_addr(a, 3, rx_bits), buf.data(), &len), 0);
            EXPECT_EQ(buf, b);
        }
    }
}

TEST_F(AvHostileTest, KeyLookupRejectsMeaninglessBits) {
    open_domain({.auth_keys = true});
    fid_av *av = open_av();
    const uint8_t key[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    fi_addr_t h = 0;
    ASSERT_EQ(fi_av_insert_auth_key(av, key, sizeof key, &h, 0), 0);
    uint8_t out[8];
    size_t len = sizeof out;
    ASSERT_EQ(fi_av_lookup_auth_key(av, h, out, &len), 0);
    len = sizeof out;
    WarnCapture w;
    EXPECT_EQ(fi_av_lookup_auth_key(av, h | (fi_addr_t{1} << 40), out, &len), -FI_EINVAL);
    EXPECT_EQ(fi_av_set_user_id(av, h | (fi_addr_t{1} << 40), 1, FI_AUTH_KEY), -FI_EINVAL);
    EXPECT_GE(w.count(), 1u);
}

TEST_F(AvHostileTest, ServicesThatAreNoPort) {
    open_domain();
    fid_av *av = open_av();
    fi_addr_t out = 0;
    for (const char *bad : {"65536", "70000", "", "-1", "+80", " 80", "80 ", "0", "0x50",
                            "99999999999999999999", "no-such-service-name"}) {
        WarnCapture w;
        EXPECT_EQ(fi_av_insertsvc(av, "10.0.0.1", bad, &out, 0, nullptr), -FI_EINVAL)
            << "\"" << bad << "\"";
        EXPECT_EQ(w.count(), 1u) << bad;
        std::vector<fi_addr_t> many(2);
        EXPECT_EQ(fi_av_insertsym(av, "10.0.0.1", 1, bad, 2, many.data(), 0, nullptr),
                  -FI_EINVAL)
            << bad;
    }
    EXPECT_EQ(fi_av_insertsvc(av, "10.0.0.1", "65535", &out, 0, nullptr), 1);
    EXPECT_EQ(fi_av_insertsvc(av, "10.0.0.1", "1", &out, 0, nullptr), 1);
    EXPECT_EQ(fi_av_insertsvc(av, "10.0.0.1", "http", &out, 0, nullptr), 1)
        << "a service name /etc/services knows";
    std::vector<fi_addr_t> two(2);
    EXPECT_EQ(fi_av_insertsym(av, "10.0.0.1", 1, "65534", 2, two.data(), 0, nullptr), 2);
    EXPECT_EQ(fi_av_insertsym(av, "10.0.0.1", 1, "65535", 2, two.data(), 0, nullptr), -FI_EINVAL)
        << "the range would pass port 65535";
}

}  // namespace
}  // namespace ufi::av_test
