/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tools/uvinfo: ConnectX model names by PCI device id (uvinfo.h). */
#include "tools/uvinfo/uvinfo.h"

#include <stddef.h>

const char *uvi_connectx_name(unsigned device_id)
{
	/* Mellanox PCI device ids of the mlx5 family (the PCI ID Repository, pci-ids.ucw.cz, vendor 15b3). */
	switch (device_id) {
	case 0x1013: return "ConnectX-4";
	case 0x1014: return "ConnectX-4 VF";
	case 0x1015: return "ConnectX-4 Lx";
	case 0x1016: return "ConnectX-4 Lx VF";
	case 0x1017: return "ConnectX-5";
	case 0x1018: return "ConnectX-5 VF";
	case 0x1019: return "ConnectX-5 Ex";
	case 0x101a: return "ConnectX-5 Ex VF";
	case 0x101b: return "ConnectX-6";
	case 0x101c: return "ConnectX-6 VF";
	case 0x101d: return "ConnectX-6 Dx";
	case 0x101e: return "ConnectX VF";
	case 0x101f: return "ConnectX-6 Lx";
	case 0x1021: return "ConnectX-7";
	case 0x1023: return "ConnectX-8";
	default: return NULL;
	}
}
