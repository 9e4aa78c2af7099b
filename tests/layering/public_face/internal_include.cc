// SPDX-License-Identifier: Apache-2.0
// Must NOT compile: a program that links only libsrt's facade (srt::srt), as an embedder does,
// includes an internal header. The `public_face_hides_internals` test builds this and expects
// the compiler to say the header is not there.
#include "base/strings.h"
#include "srt/sandbox.h"

int main() { return 0; }
