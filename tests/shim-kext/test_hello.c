/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* HELLO (version handshake) and DEVICE_INFO. */
#include <string.h>

#include "tests/shim-kext/support/fixture.h"

TestSuite(hello, .init = fx_setup_closed, .fini = fx_teardown);

static void open_root(void)
{
	struct uvshim_cred root = {.uid = 0};
	cr_assert_eq(uvshim_owner_open(&F->dev, &root, &F->owner_a), 0);
}

Test(hello, returns_the_kext_version_page_size_and_limits)
{
	open_root();
	struct uvshim_hello_req h = {.abi_major = UVSHIM_ABI_MAJOR, .abi_minor = UVSHIM_ABI_MINOR};
	struct uvshim_hello_rep r;
	cr_assert_eq(fx_call(UVSHIM_SEL_HELLO, &h, &r), 0);
	cr_assert_eq(r.abi_major, UVSHIM_ABI_MAJOR);
	cr_assert_eq(r.abi_minor, UVSHIM_ABI_MINOR);
	cr_assert_eq(r.page_size, PG);
	cr_assert_eq(r.num_vectors, 8);
	cr_assert_eq(r.max_segs_per_reply, UVSHIM_MAX_SEGS_PER_REPLY);
	cr_assert_eq(r.max_pins, 64);
	cr_assert_eq(r.max_pinned_bytes, UVSHIM_DEFAULT_MAX_PINNED_BYTES);
}

Test(hello, other_major_is_eversion_and_still_reports_the_kext_version)
{
	open_root();
	struct uvshim_hello_req h = {.abi_major = UVSHIM_ABI_MAJOR + 1};
	struct uvshim_hello_rep r;
	memset(&r, 0xff, sizeof(r));
	cr_assert_eq(fx_call(UVSHIM_SEL_HELLO, &h, &r), -UVSHIM_EVERSION);
	cr_assert_eq(r.abi_major, UVSHIM_ABI_MAJOR);
	cr_assert_eq(r.page_size, 0, "nothing but the version on a mismatch");
}

Test(hello, newer_minor_from_the_client_is_accepted)
{
	open_root();
	struct uvshim_hello_req h = {.abi_major = UVSHIM_ABI_MAJOR, .abi_minor = UVSHIM_ABI_MINOR + 5};
	struct uvshim_hello_rep r;
	cr_assert_eq(fx_call(UVSHIM_SEL_HELLO, &h, &r), 0);
}

Test(hello, calls_before_hello_are_enohello)
{
	open_root();
	struct uvshim_info_req q = {0};
	struct uvshim_info_rep r;
	cr_assert_eq(fx_call(UVSHIM_SEL_DEVICE_INFO, &q, &r), -UVSHIM_ENOHELLO);
	cr_assert_eq(fake_pin(F, UVA, PG, UVSHIM_PIN_DEVICE_READ, NULL), -UVSHIM_ENOHELLO);
	cr_assert_eq(fake_count(F, EV_PIN), 0);
}

Test(hello, calls_after_a_mismatched_hello_are_eversion)
{
	open_root();
	struct uvshim_hello_req h = {.abi_major = 0};
	struct uvshim_hello_rep hr;
	cr_assert_eq(fx_call(UVSHIM_SEL_HELLO, &h, &hr), -UVSHIM_EVERSION);
	cr_assert_eq(fake_dma(F, 4096, 4096, NULL), -UVSHIM_EVERSION);
}

Test(hello, a_matching_hello_after_a_mismatch_recovers)
{
	open_root();
	struct uvshim_hello_req bad = {.abi_major = 9}, good = {.abi_major = UVSHIM_ABI_MAJOR};
	struct uvshim_hello_rep hr;
	fx_call(UVSHIM_SEL_HELLO, &bad, &hr);
	cr_assert_eq(fx_call(UVSHIM_SEL_HELLO, &good, &hr), 0);
	cr_assert_eq(fake_dma(F, 4096, 4096, NULL), 0);
}

Test(hello, hello_from_a_non_owner_is_eperm)
{
	open_root();
	struct uvshim_hello_req h = {.abi_major = UVSHIM_ABI_MAJOR};
	struct uvshim_hello_rep r;
	cr_assert_eq(fake_call(F, &F->owner_b, UVSHIM_SEL_HELLO, &h, &r), -UVSHIM_EPERM);
}

Test(hello, device_info_reports_pci_identity_and_the_uar_region)
{
	cr_assert_eq(fake_open_hello(F), 0);
	struct uvshim_info_req q = {0};
	struct uvshim_info_rep r;
	cr_assert_eq(fx_call(UVSHIM_SEL_DEVICE_INFO, &q, &r), 0);
	cr_assert_eq(r.vendor_id, 0x15b3);
	cr_assert_eq(r.device_id, 0x1017);
	cr_assert_eq(r.bus, 3);
	cr_assert_eq(r.link_width, 8);
	cr_assert_eq(r.tunnelled, 1);
	cr_assert_eq(r.page_size, PG);
	cr_assert_eq(r.bar0_len, 32ull << 20);
	cr_assert_eq(r.uar_offset, PG, "first page past the init segment");
	cr_assert_eq(r.uar_offset + r.uar_len, r.bar0_len);
}

Test(hello, device_info_reply_has_no_stale_bytes)
{
	cr_assert_eq(fake_open_hello(F), 0);
	struct uvshim_info_req q = {0};
	struct uvshim_info_rep r;
	memset(&r, 0xaa, sizeof(r));
	cr_assert_eq(fx_call(UVSHIM_SEL_DEVICE_INFO, &q, &r), 0);
	cr_assert_eq(r.reserved, 0);
	cr_assert_eq(r.pci_domain, 0);
}

Test(hello, a_refused_call_clears_the_reply_buffer)
{
	open_root();
	struct uvshim_info_req q = {0};
	struct uvshim_info_rep r;
	memset(&r, 0xaa, sizeof(r));
	cr_assert_eq(fx_call(UVSHIM_SEL_DEVICE_INFO, &q, &r), -UVSHIM_ENOHELLO);
	const unsigned char *b = (const unsigned char *)&r;
	for (size_t i = 0; i < sizeof(r); i++)
		cr_assert_eq(b[i], 0, "byte %zu", i);
}
