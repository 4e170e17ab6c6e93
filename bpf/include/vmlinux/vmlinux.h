/* SPDX-License-Identifier: GPL-2.0 */
/* Dispatcher: picks the vendored vmlinux.h for the BPF target architecture.
 * See README.md beside this file for provenance and the regeneration command.
 * The build passes -D__TARGET_ARCH_<arch> (cmake/BpfObject.cmake).
 */
#ifndef DIMCTL_VMLINUX_DISPATCH_H
#define DIMCTL_VMLINUX_DISPATCH_H

#if defined(__TARGET_ARCH_x86)
#include "x86/vmlinux.h"
#else
#error "dimctl: no vendored vmlinux.h for this __TARGET_ARCH_* (add bpf/include/vmlinux/<arch>/vmlinux.h)"
#endif

#endif /* DIMCTL_VMLINUX_DISPATCH_H */
