/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* "vfio:" URI parsing (hw/shim/vfio_uri.c): accepted spellings, options, and the
 * errors a mistyped address or option gets. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "hw/shim/vfio_uri.h"

static struct shim_vfio_uri u;
static char err[256];

Test(vfio_uri, full_address_is_kept_in_sysfs_spelling)
{
	cr_assert_eq(shim_vfio_parse_uri("0000:03:00.0", &u, err, sizeof(err)), 0);
	cr_assert_str_eq(u.bdf, "0000:03:00.0");
}

Test(vfio_uri, short_address_gets_domain_zero)
{
	cr_assert_eq(shim_vfio_parse_uri("03:00.1", &u, err, sizeof(err)), 0);
	cr_assert_str_eq(u.bdf, "0000:03:00.1");
}

Test(vfio_uri, upper_case_and_short_fields_are_normalised)
{
	cr_assert_eq(shim_vfio_parse_uri("1:A:1F.7", &u, err, sizeof(err)), 0);
	cr_assert_str_eq(u.bdf, "0001:0a:1f.7");
}

Test(vfio_uri, vmd_domain_above_16_bits_is_accepted)
{
	cr_assert_eq(shim_vfio_parse_uri("10000:e1:00.0", &u, err, sizeof(err)), 0);
	cr_assert_str_eq(u.bdf, "10000:e1:00.0");
}

Test(vfio_uri, defaults_without_options)
{
	cr_assert_eq(shim_vfio_parse_uri("0000:03:00.0", &u, err, sizeof(err)), 0);
	cr_assert_eq(u.iova_base, SHIM_VFIO_IOVA_BASE_DEFAULT);
	cr_assert_eq(u.iova_end, 0);
	cr_assert_eq(u.msix, SHIM_VFIO_MSIX_DEFAULT);
	cr_assert_eq(u.memlock_need, SHIM_VFIO_MEMLOCK_DEFAULT);
}

Test(vfio_uri, options_after_commas_are_applied)
{
	cr_assert_eq(shim_vfio_parse_uri("03:00.0,iova_base=0x100000000,iova_end=0x200000000,msix=4,memlock=256M",
					 &u, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(u.iova_base, 0x100000000ull);
	cr_assert_eq(u.iova_end, 0x200000000ull);
	cr_assert_eq(u.msix, 4);
	cr_assert_eq(u.memlock_need, 256ull << 20);
}

Test(vfio_uri, memlock_zero_disables_the_check)
{
	cr_assert_eq(shim_vfio_parse_uri("03:00.0,memlock=0", &u, err, sizeof(err)), 0);
	cr_assert_eq(u.memlock_need, 0);
}

struct bad { const char *uri; const char *says; };

static void expect_einval(const char *uri, const char *says)
{
	int rc = shim_vfio_parse_uri(uri, &u, err, sizeof(err));
	cr_assert_eq(rc, -EINVAL, "'%s' gave %d", uri, rc);
	cr_assert(strstr(err, says) != NULL, "'%s': message '%s' lacks '%s'", uri, err, says);
}

Test(vfio_uri, malformed_addresses_are_einval_with_the_text)
{
	expect_einval("", "not a PCI address");
	expect_einval("03:00", "not a PCI address");
	expect_einval("03:00.8", "03:00.8");
	expect_einval("03:20.0", "03:20.0");          /* device numbers stop at 0x1f */
	expect_einval("100:00.0", "100:00.0");        /* bus numbers stop at 0xff */
	expect_einval("0:0:0:0.0", "not a PCI address");
	expect_einval("zz:00.0", "not a PCI address");
	expect_einval("03:00.0x", "not a PCI address");
	expect_einval("1234567:00:00.0", "not a PCI address");
}

Test(vfio_uri, bad_options_are_einval_naming_the_option)
{
	expect_einval("03:00.0,iova_base", "needs a value");
	expect_einval("03:00.0,iova_base=", "not a number");
	expect_einval("03:00.0,iova_base=12q", "not a number");
	expect_einval("03:00.0,iova_base=-1", "not a number");
	expect_einval("03:00.0,colour=blue", "unknown option 'colour'");
	expect_einval("03:00.0,msix=4096", "msix=4096");
	expect_einval("03:00.0,memlock=99999999999T", "not a number");
	expect_einval("03:00.0,iova_base=0x2000,iova_end=0x1000", "not above iova_base");
	expect_einval("03:00.0,", "needs a value");
}

Test(vfio_uri, null_arguments_are_einval)
{
	cr_assert_eq(shim_vfio_parse_uri(NULL, &u, err, sizeof(err)), -EINVAL);
	cr_assert_eq(shim_vfio_parse_uri("03:00.0", NULL, err, sizeof(err)), -EINVAL);
}
