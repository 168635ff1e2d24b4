// transports/op_limits: a resource's limits as plain numbers, each only where UCT's flag for
// the operation is set (runtime/ reads them without UCT's flag names).
#include "synthetic_resources.h"
#include "transports/op_limits.h"

#include <uct/api/uct.h>

#include <gtest/gtest.h>

#include <string>

namespace ufi::transports {
namespace {

TEST(OpLimits, AmSendMaxPrefersShortThenBcopy) {
    Resource posix = testing::shm_resource("posix");
    EXPECT_EQ(am_send_max(posix), 100u) << "am_short";
    posix.iface_cap_flags &= ~UCT_IFACE_FLAG_AM_SHORT;
    EXPECT_EQ(am_send_max(posix), 8256u) << "am_bcopy without am_short";
    EXPECT_EQ(am_send_max(testing::shm_resource("cma")), std::nullopt) << "cma sends no messages";
}

TEST(OpLimits, ZcopyIovOnlyWithTheFlag) {
    const Resource cma = testing::shm_resource("cma");
    EXPECT_EQ(put_zcopy_max_iov(cma), 16u);
    EXPECT_EQ(get_zcopy_max_iov(cma), 16u);
    EXPECT_EQ(am_zcopy_max_iov(cma), 0u);
    Resource no_get = cma;
    no_get.iface_cap_flags &= ~UCT_IFACE_FLAG_GET_ZCOPY;
    EXPECT_EQ(get_zcopy_max_iov(no_get), 0u) << "a size without its flag means nothing";
}

TEST(OpLimits, SizeLimitsNameWhatIsSupported) {
    const Resource self = testing::self_resource();
    std::vector<std::string> names;
    for (const SizeLimit &l : op_size_limits(self)) names.emplace_back(l.name);
    EXPECT_EQ(names, (std::vector<std::string>{"am_short_max", "am_bcopy_max", "put_short_max",
                                               "put_bcopy_max", "get_bcopy_max"}));
    const auto limits = op_size_limits(self);
    EXPECT_EQ(limits[0].value, 8192u);
    EXPECT_TRUE(op_size_limits(Resource{}).empty());
}

}  // namespace
}  // namespace ufi::transports
