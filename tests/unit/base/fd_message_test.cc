// SPDX-License-Identifier: Apache-2.0
#include "base/fd_message.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "base/unique_fd.h"

namespace srt {
namespace {

struct Got {
  std::vector<uint8_t> bytes;
  std::vector<UniqueFd> fds;
};

Got Receive(int sock) {
  Got g;
  g.bytes.resize(64);
  iovec iov{g.bytes.data(), g.bytes.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(8 * sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  EXPECT_GE(n, 0);
  g.bytes.resize(n < 0 ? 0 : static_cast<size_t>(n));
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      g.fds.emplace_back(fd);
    }
  }
  return g;
}

ino_t Inode(int fd) {
  struct stat st {};
  EXPECT_EQ(fstat(fd, &st), 0);
  return st.st_ino;
}

class FdMessageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    a_.reset(sv[0]);
    b_.reset(sv[1]);
  }
  UniqueFd a_, b_;
};

TEST_F(FdMessageTest, CarriesTheBytesAndEveryDescriptorInOrder) {
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  UniqueFd r(p[0]), w(p[1]);
  const uint8_t bytes[] = {1, 2, 3, 4, 5};
  const int fds[] = {r.get(), w.get(), r.get(), 0};
  FdMessage m(bytes, fds);
  ASSERT_EQ(sendmsg(a_.get(), m.get(), MSG_NOSIGNAL), 5);
  Got g = Receive(b_.get());
  EXPECT_EQ(g.bytes, std::vector<uint8_t>(bytes, bytes + 5));
  ASSERT_EQ(g.fds.size(), 4u);
  EXPECT_EQ(Inode(g.fds[0].get()), Inode(r.get()));
  EXPECT_EQ(Inode(g.fds[1].get()), Inode(w.get()));
  EXPECT_EQ(Inode(g.fds[2].get()), Inode(r.get()));
  EXPECT_EQ(Inode(g.fds[3].get()), Inode(0));
}

TEST_F(FdMessageTest, NoDescriptorsIsBytesOnly) {
  const uint8_t bytes[] = {9, 9};
  FdMessage m(bytes, {});
  EXPECT_EQ(m.get()->msg_control, nullptr);
  ASSERT_EQ(sendmsg(a_.get(), m.get(), MSG_NOSIGNAL), 2);
  Got g = Receive(b_.get());
  EXPECT_EQ(g.bytes.size(), 2u);
  EXPECT_TRUE(g.fds.empty());
}

TEST_F(FdMessageTest, TooManyOrNegativeDescriptorsSendNone) {
  const uint8_t bytes[] = {7};
  const int five[] = {0, 0, 0, 0, 0};
  EXPECT_EQ(FdMessage(bytes, five).get()->msg_control, nullptr);
  const int negative[] = {0, -1};
  EXPECT_EQ(FdMessage(bytes, negative).get()->msg_control, nullptr);
}

}  // namespace
}  // namespace srt
