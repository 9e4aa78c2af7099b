// SPDX-License-Identifier: Apache-2.0
// The host of the tests' precompiled header (tests/CMakeLists.txt): a program that does nothing.
int main() { return 0; }
