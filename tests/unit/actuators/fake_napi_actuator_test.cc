// FakeNapiActuator behaves like NapiNetlink where callers depend on it.
#include <gtest/gtest.h>

#include <cerrno>

#include "fakes/fake_napi_actuator.h"

namespace dimctl::fakes {
namespace {

TEST(FakeNapiActuator, ListsSetsAndReadsBack) {
  FakeNapiActuator napi;
  napi.add_napi(4, 8193);
  napi.add_napi(4, 8194);
  napi.add_napi(5, 9000);
  auto l = napi.list(4);
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->size(), 2u);
  EXPECT_EQ((*l)[0].id, 8193u);
  EXPECT_EQ(napi.list(6).error().code(), ENODEV);

  seam::NapiConfig req;
  req.defer_hard_irqs = 2;
  auto r = napi.set(8193, req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->config, (seam::NapiConfig{2, 0, 0})) << "only the present field is written";
  EXPECT_EQ(napi.config(8194), FakeNapiActuator::defaults());
  EXPECT_EQ(napi.set(8193, seam::NapiConfig{}).error().code(), EINVAL);
}

TEST(FakeNapiActuator, RecreatedNapiIsGoneUnderItsOldId) {
  FakeNapiActuator napi;
  napi.add_napi(4, 8193, {2, 200'000, 0});
  napi.recreate(8193, 8200);
  EXPECT_EQ(napi.get(8193).error().code(), ENOENT);
  EXPECT_EQ(napi.set(8193, {1, std::nullopt, std::nullopt}).error().code(), ENOENT);
  EXPECT_EQ(napi.get(8200)->config, FakeNapiActuator::defaults());
  EXPECT_EQ(napi.get(8200)->ifindex, 4u);
}

TEST(FakeNapiActuator, UnavailableFailsEveryCall) {
  FakeNapiActuator napi;
  napi.add_napi(4, 8193);
  napi.unavailable(DIMCTL_ERR(EOPNOTSUPP, "needs Linux >= 6.13"));
  EXPECT_EQ(napi.available().error().code(), EOPNOTSUPP);
  EXPECT_EQ(napi.list(4).error().code(), EOPNOTSUPP);
  EXPECT_EQ(napi.get(8193).error().code(), EOPNOTSUPP);
  EXPECT_EQ(napi.set(8193, {1, std::nullopt, std::nullopt}).error().code(), EOPNOTSUPP);
}

}  // namespace
}  // namespace dimctl::fakes
