// A tiny netlink byte-buffer writer for tests, independent of libmnl and of the code under
// test: messages are assembled byte by byte so malformed ones can be built on purpose.
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace dimctl::testing_nl {

class MsgBuilder {
 public:
  MsgBuilder(uint16_t type, uint16_t flags = 0, uint32_t seq = 0, uint32_t pid = 0) {
    nlmsghdr h{};
    h.nlmsg_type = type;
    h.nlmsg_flags = flags;
    h.nlmsg_seq = seq;
    h.nlmsg_pid = pid;
    raw(&h, sizeof h);
  }
  MsgBuilder& genl(uint8_t cmd, uint8_t version = 1) {
    const uint8_t g[4] = {cmd, version, 0, 0};
    raw(g, sizeof g);
    return *this;
  }
  MsgBuilder& raw(const void* p, size_t n) {
    if (n == 0) return *this;
    const size_t off = buf_.size();
    buf_.resize(off + n);
    std::memcpy(buf_.data() + off, p, n);
    return *this;
  }
  MsgBuilder& pad() {
    while (buf_.size() % 4 != 0) buf_.push_back(0);
    return *this;
  }
  MsgBuilder& attr(uint16_t type, const void* p, size_t n) {
    nlattr a{};
    a.nla_type = type;
    a.nla_len = static_cast<uint16_t>(sizeof(nlattr) + n);
    raw(&a, sizeof a);
    raw(p, n);
    return pad();
  }
  MsgBuilder& u8(uint16_t type, uint8_t v) { return attr(type, &v, 1); }
  MsgBuilder& u16(uint16_t type, uint16_t v) { return attr(type, &v, 2); }
  MsgBuilder& u32(uint16_t type, uint32_t v) { return attr(type, &v, 4); }
  MsgBuilder& str(uint16_t type, const std::string& s) {
    return attr(type, s.c_str(), s.size() + 1);
  }
  // Nests: begin() returns a handle for end().
  size_t begin(uint16_t type) {
    const size_t off = buf_.size();
    nlattr a{};
    a.nla_type = static_cast<uint16_t>(type | NLA_F_NESTED);
    raw(&a, sizeof a);
    return off;
  }
  MsgBuilder& end(size_t off) {
    const auto len = static_cast<uint16_t>(buf_.size() - off);
    std::memcpy(buf_.data() + off, &len, sizeof len);
    return *this;
  }
  // Finalises nlmsg_len (= current size unless `len` overrides it) and returns the message.
  const nlmsghdr* msg(uint32_t len = 0) {
    const uint32_t l = len != 0 ? len : static_cast<uint32_t>(buf_.size());
    std::memcpy(buf_.data(), &l, sizeof l);
    return reinterpret_cast<const nlmsghdr*>(buf_.data());
  }
  std::vector<uint8_t>& bytes() { return buf_; }
  size_t size() const { return buf_.size(); }

 private:
  std::vector<uint8_t> buf_;
};

}  // namespace dimctl::testing_nl
