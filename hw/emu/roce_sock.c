/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The port's UDP sockets (roce_wire.h).  Why several: the ICRC covers the UDP source
 * port, and RoCE v2 puts flow entropy there (A17.5.1.1; mlx5 derives it from the flow
 * label), so a packet must leave from exactly the port its ICRC was computed for.  A
 * UDP socket sends from the port it is bound to, hence one socket per source port in
 * use, bound to the port's own address; all of them send with IP_PMTUDISC_DO, for
 * which Linux sends DF=1 and ID=0 (ip_select_ident on an unconnected socket), the two
 * header fields the ICRC covers and a receiver cannot see. */
#include "hw/emu/roce_wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hw/platform/sock.h"

#define TX_NONE (-1)          /* not opened yet */
#define TX_UNBINDABLE (-2)    /* someone else holds addr:sport: send from 4791 */
#define NSPORT 0x4000

static int set_df(int fd)
{
	return plat_sock_set_df(fd);
}

/* Multicast leaves by the port's own address, so on the loopback interface, never by
 * the default route: IP_MULTICAST_IF names the interface by that address (ip(7)); the
 * kernel's default IP_MULTICAST_TTL of 1 and IP_MULTICAST_LOOP of 1 keep a group's
 * packets on this host and hand them to every socket of it that joined the group. */
static void set_mc_if(int fd, uint32_t ipv4)
{
	struct in_addr a = { .s_addr = htonl(ipv4) };

	(void)setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &a, sizeof(a));
}

int emu_roce_sock_init(struct emu_roce_sock *s, int fd, uint32_t ipv4)
{
	int one = 1, rc;

	if (!s || fd < 0)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->ipv4 = ipv4;
	pthread_mutex_init(&s->lock, NULL);     /* first, so that fini is always safe */
	/* a kernel without UDP segmentation would ignore the control message and send
	 * the whole run as one datagram: ask first (hw/platform/sock.h) */
	s->seg_off = !plat_udp_segment_supported(fd);
	rc = set_df(fd);
	set_mc_if(fd, ipv4);
	if (rc == 0 && (setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one)) < 0 ||
			setsockopt(fd, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one)) < 0))
		rc = -errno;
	return rc;
}

int emu_roce_sock_coalesce(struct emu_roce_sock *s)
{
	return s ? plat_udp_gro_enable(s->fd) : -EINVAL;
}

void emu_roce_sock_fini(struct emu_roce_sock *s)
{
	if (!s)
		return;
	if (s->tx_fd) {
		for (unsigned i = 0; i < NSPORT; i++)
			if (s->tx_fd[i] >= 0)
				close(s->tx_fd[i]);
		free(s->tx_fd);
		s->tx_fd = NULL;
	}
	s->ntx = 0;
	free(s->txq);
	s->txq = NULL;
	pthread_mutex_destroy(&s->lock);
}

static int open_bound(uint32_t ipv4, uint16_t port)
{
	struct sockaddr_in sa;
	int fd = plat_socket(AF_INET, SOCK_DGRAM, 0);
	int rc, small = 1;

	if (fd < 0)
		return fd;
	rc = set_df(fd);
	set_mc_if(fd, ipv4);
	/* nothing is ever sent to these ports: keep their receive queues tiny */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(ipv4);
	if (rc == 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		rc = -errno;
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

/* The fd to send from `sport`: cached for the flow-label range, *tmp for a one-off
 * socket the caller closes, or -EADDRINUSE-like failure (then send from s->fd). */
static int tx_fd(struct emu_roce_sock *s, uint16_t sport, int *tmp)
{
	int fd;

	*tmp = -1;
	if (sport == EMU_ROCE_PORT)
		return s->fd;
	if (sport < EMU_ROCE_SPORT_MIN) {
		fd = open_bound(s->ipv4, sport);
		if (fd >= 0)
			*tmp = fd;
		return fd;
	}
	pthread_mutex_lock(&s->lock);
	if (!s->tx_fd) {
		s->tx_fd = malloc(NSPORT * sizeof(int));
		if (!s->tx_fd) {
			pthread_mutex_unlock(&s->lock);
			return -ENOMEM;
		}
		for (unsigned i = 0; i < NSPORT; i++)
			s->tx_fd[i] = TX_NONE;
	}
	fd = s->tx_fd[sport - EMU_ROCE_SPORT_MIN];
	if (fd == TX_NONE) {
		fd = open_bound(s->ipv4, sport);
		if (fd >= 0 && s->ntx < EMU_ROCE_TX_CACHE) {
			s->tx_fd[sport - EMU_ROCE_SPORT_MIN] = fd;
			s->ntx++;
		} else if (fd >= 0) {
			*tmp = fd;      /* cache full: this send only */
		} else if (fd == -EADDRINUSE) {
			s->tx_fd[sport - EMU_ROCE_SPORT_MIN] = TX_UNBINDABLE;
		}
	} else if (fd == TX_UNBINDABLE) {
		fd = -EADDRINUSE;
	}
	pthread_mutex_unlock(&s->lock);
	return fd;
}

/* The msghdr of one UDP datagram to or from an IPv4 address: one buffer, the peer in sa
 * (sendmsg reads it, recvmsg fills it in); control data is the caller's. */
static void datagram_msg(struct msghdr *m, struct sockaddr_in *sa, struct iovec *iov, void *buf, size_t len)
{
	iov->iov_base = buf;
	iov->iov_len = len;
	memset(m, 0, sizeof(*m));
	m->msg_name = sa;
	m->msg_namelen = sizeof(*sa);
	m->msg_iov = iov;
	m->msg_iovlen = 1;
}

/* The IP_TOS control message of a packet that asks for a TOS (cm: the caller's). */
union tos_cmsg {
	struct cmsghdr h;
	char b[CMSG_SPACE(sizeof(int))];
};

/* The IP_TOS control message at h; its space. */
static size_t put_tos(struct cmsghdr *h, uint8_t tos)
{
	int v = tos;

	h->cmsg_level = IPPROTO_IP;
	h->cmsg_type = IP_TOS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &v, sizeof(v));
	return CMSG_SPACE(sizeof(int));
}

static void set_tos(struct msghdr *m, union tos_cmsg *cm, uint8_t tos)
{
	if (!tos)
		return;
	memset(cm, 0, sizeof(*cm));
	m->msg_control = cm->b;
	m->msg_controllen = put_tos(&cm->h, tos);
}

static void set_dest(struct sockaddr_in *sa, const struct emu_roce_ip *ip)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(ip->dport);
	sa->sin_addr.s_addr = htonl(ip->daddr);
}

/* Corked packets: copies, in order, each with the socket it leaves from.  32, though
 * the kernel segments up to 64 (PLAT_UDP_SEGMENT_MAX_SEGS): with 64, Debian's ib_write_bw
 * -s 65536 at path MTU 1024 (a message's 63 packets after its FIRST in one datagram)
 * moved 805-836 MiB/s against 1,182-1,344, four interleaved rounds (docs/benchmarks.md,
 * "2026-12-07, 21:40 UTC"). */
#define TXQ_SLOTS 32
#define TXQ_SLOT_BYTES 4400          /* headers + a 4096-byte MTU + ICRC */

/* The control messages of a segmented datagram: its TOS and its segment size. */
union seg_cmsg {
	struct cmsghdr h;
	char b[CMSG_SPACE(sizeof(int)) + PLAT_UDP_SEGMENT_SPACE];
};

struct emu_roce_txq {
	unsigned n;
	int fd[TXQ_SLOTS];
	uint8_t tos[TXQ_SLOTS];
	struct plat_dgram dg[TXQ_SLOTS];
	struct iovec iov[TXQ_SLOTS];
	struct sockaddr_in sa[TXQ_SLOTS];
	union tos_cmsg cm[TXQ_SLOTS];
	uint8_t pkt[TXQ_SLOTS][TXQ_SLOT_BYTES];
	/* what one system call sends: a packet's own message, or one segmented datagram
	 * (seg_msg) for several */
	struct plat_dgram out[TXQ_SLOTS];
	unsigned out_pkts[TXQ_SLOTS];
	union seg_cmsg scm[TXQ_SLOTS];
};

/* How many packets from i on, all before end, may leave as one segmented datagram
 * (plat_udp_segment_cmsg): same destination and TOS, all as long as the first but a
 * shorter last, within the kernel's limits.  A message's MIDDLE packets and its LAST
 * are; its FIRST carries a RETH and is longer, so it leaves alone: a shorter packet
 * followed by one of its own length starts the next run instead of ending this one.
 * 1: the packet leaves alone.
 *
 * Only to a loopback address (127.0.0.0/8).  Linux numbers the IPv4 IDs of the
 * segments 0, 1, 2 ... (inet_gso_segment in net/ipv4/af_inet.c), and RoCE v2's ICRC
 * covers the ID (IBTA Annex A17.3.3: TTL, TOS and the checksum are masked, the ID is not): a
 * receiver that sees the IP header -- Linux's rxe, a ConnectX, scapy on a capture --
 * would find every segment after the first corrupt.  A UDP socket never sees the ID,
 * so emulated NICs on loopback (and each other's receive path, which assumes ID 0 as
 * the sender's kernel writes for an unsegmented DF datagram) are not affected. */
static bool seg_dest(const struct sockaddr_in *sa)
{
	return (ntohl(sa->sin_addr.s_addr) >> 24) == 127;
}

static unsigned seg_run(const struct emu_roce_txq *q, unsigned i, unsigned end)
{
	size_t seg = q->iov[i].iov_len, total = seg;
	unsigned k = i + 1;

	if (!seg_dest(&q->sa[i]))
		return 1;
	while (k < end && k - i < PLAT_UDP_SEGMENT_MAX_SEGS && q->tos[k] == q->tos[i] &&
	       q->sa[k].sin_addr.s_addr == q->sa[i].sin_addr.s_addr && q->sa[k].sin_port == q->sa[i].sin_port &&
	       q->iov[k].iov_len <= seg && total + q->iov[k].iov_len <= PLAT_UDP_SEGMENT_MAX_BYTES) {
		if (q->iov[k].iov_len < seg) {
			/* only the last segment may be shorter, and not one that leads a run */
			if (!(k + 1 < end && q->iov[k + 1].iov_len == q->iov[k].iov_len))
				k++;
			break;
		}
		total += q->iov[k++].iov_len;
	}
	return k - i;
}

/* Packets i .. i+n-1 as one datagram the kernel cuts at the first one's length; false
 * where the system cannot. */
static bool seg_msg(struct emu_roce_txq *q, unsigned o, unsigned i, unsigned n)
{
	struct msghdr *m = &q->out[o].hdr;
	union seg_cmsg *c = &q->scm[o];
	struct cmsghdr *h;
	size_t used = 0;

	memset(m, 0, sizeof(*m));
	memset(c, 0, sizeof(*c));
	m->msg_name = &q->sa[i];
	m->msg_namelen = sizeof(q->sa[i]);
	m->msg_iov = &q->iov[i];
	m->msg_iovlen = n;
	m->msg_control = c->b;
	m->msg_controllen = sizeof(c->b);
	h = CMSG_FIRSTHDR(m);
	if (q->tos[i]) {
		used = put_tos(h, q->tos[i]);
		h = CMSG_NXTHDR(m, h);
	}
	if (!plat_udp_segment_cmsg(h, (unsigned short)q->iov[i].iov_len))
		return false;
	m->msg_controllen = used + PLAT_UDP_SEGMENT_SPACE;
	return true;
}

/* Send the queue: one system call per run of packets from the same socket.  A packet
 * the socket refuses is lost, as an unqueued one whose error nobody acts on would be
 * (the requester's timer resends it); EMSGSIZE (larger than the interface takes with
 * DF) turns corking off, so the resent packet meets the error at its own send. */
static void txq_flush(struct emu_roce_sock *s)
{
	struct emu_roce_txq *q = s->txq;
	bool plain = false;
	unsigned i = 0;

	if (!q)
		return;
	while (i < q->n) {
		unsigned end = i + 1, nout = 0;
		int r;

		while (end < q->n && q->fd[end] == q->fd[i])
			end++;
		/* the run's messages: runs of equal packets as one segmented datagram each,
		 * unless the socket refused one before (seg_off) */
		for (unsigned k = i; k < end; k += q->out_pkts[nout++]) {
			unsigned n = s->seg_off || plain ? 1 : seg_run(q, k, end);

			if (n < 2 || !seg_msg(q, nout, k, n)) {
				n = 1;
				q->out[nout] = q->dg[k];
			}
			q->out_pkts[nout] = n;
		}
		r = plat_send_many(q->fd[i], q->out, nout);
		s->tx_calls++;
		plain = false;
		if (r < 0) {
			if (q->out_pkts[0] > 1) {
				/* the kernel cannot segment here (a device without checksum
				 * offload: EIO; a size it will not cut: EINVAL): one by one from
				 * now on; anything else (ENOBUFS ...) only for this run */
				if (r == -EIO || r == -EINVAL || r == -ENOPROTOOPT || r == -EOPNOTSUPP)
					s->seg_off = true;
				else
					plain = true;
				continue;
			}
			s->tx_errors++;
			if (r == -EMSGSIZE)
				s->cork_off = true;
			i++;   /* skip the refused packet, send the rest */
			continue;
		}
		for (unsigned o = 0; o < (unsigned)r; o++) {
			if (q->out_pkts[o] > 1)
				s->tx_segmented += q->out_pkts[o];
			i += q->out_pkts[o];
		}
	}
	q->n = 0;
}

/* The queue with its next slot free for a packet of len bytes (a full queue is sent
 * first), or NULL: corking off, a packet larger than a slot, no memory. */
static struct emu_roce_txq *txq_room(struct emu_roce_sock *s, size_t len)
{
	if (s->cork_off || len > TXQ_SLOT_BYTES)
		return NULL;
	if (!s->txq) {
		s->txq = calloc(1, sizeof(*s->txq));
		if (!s->txq)
			return NULL;
	}
	if (s->txq->n == TXQ_SLOTS)
		txq_flush(s);
	return s->txq;
}

/* Queue one packet (the cork is on); false when it must go out at once instead. */
static bool txq_add(struct emu_roce_sock *s, int fd, const struct emu_roce_ip *ip, const uint8_t *pkt, size_t len)
{
	struct emu_roce_txq *q = txq_room(s, len);
	unsigned i;

	if (!q)
		return false;
	i = q->n++;
	if (pkt != q->pkt[i])   /* built in place: emu_roce_sock_tx_buf */
		memcpy(q->pkt[i], pkt, len);
	q->fd[i] = fd;
	q->tos[i] = ip->tos;
	set_dest(&q->sa[i], ip);
	datagram_msg(&q->dg[i].hdr, &q->sa[i], &q->iov[i], q->pkt[i], len);
	set_tos(&q->dg[i].hdr, &q->cm[i], ip->tos);
	return true;
}

uint8_t *emu_roce_sock_tx_buf(struct emu_roce_sock *s, size_t cap)
{
	struct emu_roce_txq *q = s && s->cork ? txq_room(s, cap) : NULL;

	return q ? q->pkt[q->n] : NULL;
}

void emu_roce_sock_cork(struct emu_roce_sock *s)
{
	s->cork++;
}

void emu_roce_sock_uncork(struct emu_roce_sock *s)
{
	if (s->cork && --s->cork == 0)
		txq_flush(s);
}

int emu_roce_sock_send(struct emu_roce_sock *s, const struct emu_roce_ip *ip, uint8_t *pkt, size_t len,
		       uint16_t *sport_used)
{
	union tos_cmsg cm;
	struct sockaddr_in sa;
	struct iovec iov;
	struct msghdr m;
	int fd, tmp, rc = 0;
	uint16_t sport;

	if (!s || !ip || !pkt || len < EMU_ROCE_BTH_LEN + EMU_ROCE_ICRC_LEN || len > EMU_ROCE_MAX_PKT)
		return -EINVAL;
	if (ip->saddr != s->ipv4)
		return -EINVAL;
	sport = ip->sport;
	fd = tx_fd(s, sport, &tmp);
	if (fd < 0) {
		/* the flow's source port is taken on this address: leave from 4791, with
		 * the ICRC that port implies, rather than not at all */
		struct emu_roce_ip alt = *ip;

		alt.sport = EMU_ROCE_PORT;
		emu_icrc_put(pkt + len - EMU_ROCE_ICRC_LEN, emu_roce_icrc(&alt, pkt, len - EMU_ROCE_ICRC_LEN));
		fd = s->fd;
		sport = EMU_ROCE_PORT;
		pthread_mutex_lock(&s->lock);
		s->tx_fallbacks++;
		pthread_mutex_unlock(&s->lock);
	}
	if (sport_used)
		*sport_used = sport;
	if (s->cork && tmp < 0 && txq_add(s, fd, ip, pkt, len))
		return 0;
	txq_flush(s);   /* whatever was queued leaves first: the wire keeps the order */
	set_dest(&sa, ip);
	datagram_msg(&m, &sa, &iov, pkt, len);
	set_tos(&m, &cm, ip->tos);
	s->tx_calls++;
	if (sendmsg(fd, &m, 0) < 0)
		rc = -errno;
	if (tmp >= 0)
		close(tmp);
	return rc;
}

/* The envelope of a received datagram: addresses, and TOS and TTL from the control
 * data IP_RECVTOS/IP_RECVTTL asked for; *seg the segment size of a coalesced one
 * (plat_udp_gro_segment), else 0. */
static void rx_envelope(uint32_t daddr, const struct sockaddr_in *sa, struct msghdr *m, struct emu_roce_ip *env,
			uint32_t *seg)
{
	struct cmsghdr *c;

	emu_roce_ip_init(env, ntohl(sa->sin_addr.s_addr), daddr, ntohs(sa->sin_port), 0);
	*seg = 0;
	for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level != IPPROTO_IP) {
			unsigned g = plat_udp_gro_segment(c);

			if (g)
				*seg = g;
			continue;
		}
		if (c->cmsg_type == IP_TOS && c->cmsg_len >= CMSG_LEN(1)) {
			env->tos = *(const uint8_t *)CMSG_DATA(c);
		} else if (c->cmsg_type == IP_TTL && c->cmsg_len >= CMSG_LEN(sizeof(int))) {
			int ttl;

			memcpy(&ttl, CMSG_DATA(c), sizeof(ttl));
			env->ttl = (uint8_t)ttl;
		}
	}
}

#define RX_CBUF (CMSG_SPACE(sizeof(int)) * 4)

ssize_t emu_roce_sock_recv(struct emu_roce_sock *s, uint8_t *buf, size_t cap, struct emu_roce_ip *env, int flags)
{
	char cbuf[RX_CBUF];
	struct sockaddr_in sa;
	struct iovec iov;
	struct msghdr m;
	ssize_t n;
	uint32_t seg;

	if (!s || !buf || !env)
		return -EINVAL;
	datagram_msg(&m, &sa, &iov, buf, cap);
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	/* MSG_TRUNC: the real length of an oversized datagram, so it counts as too long */
	n = recvmsg(s->fd, &m, flags | MSG_TRUNC);
	if (n < 0)
		return -errno;
	rx_envelope(s->ipv4, &sa, &m, env, &seg);
	return n;
}

bool emu_roce_sock_pending(struct emu_roce_sock *s)
{
	uint8_t b;

	return s && recv(s->fd, &b, sizeof(b), MSG_PEEK | MSG_DONTWAIT) >= 0;
}

struct emu_roce_rx_slots {
	struct plat_dgram dg[EMU_ROCE_RX_BATCH];
	struct iovec iov[EMU_ROCE_RX_BATCH];
	struct sockaddr_in sa[EMU_ROCE_RX_BATCH];
	char cbuf[EMU_ROCE_RX_BATCH][RX_CBUF];
	uint8_t *mem;
};

int emu_roce_rx_batch_init(struct emu_roce_rx_batch *b)
{
	struct emu_roce_rx_slots *sl;

	memset(b, 0, sizeof(*b));
	sl = calloc(1, sizeof(*sl));
	if (!sl)
		return -ENOMEM;
	/* pages are only backed where datagrams land: a few KiB a slot in practice */
	sl->mem = malloc((size_t)EMU_ROCE_RX_BATCH * (EMU_ROCE_MAX_PKT + 1));
	if (!sl->mem) {
		free(sl);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < EMU_ROCE_RX_BATCH; i++)
		b->pkt[i] = sl->mem + (size_t)i * (EMU_ROCE_MAX_PKT + 1);
	b->slots = sl;
	return 0;
}

void emu_roce_rx_batch_fini(struct emu_roce_rx_batch *b)
{
	if (!b || !b->slots)
		return;
	free(b->slots->mem);
	free(b->slots);
	memset(b, 0, sizeof(*b));
}

/* Up to EMU_ROCE_RX_BATCH datagrams from fd, all sent to daddr. */
static int recv_many_fd(int fd, uint32_t daddr, struct emu_roce_rx_batch *b, int flags)
{
	struct emu_roce_rx_slots *sl;
	int n;

	sl = b->slots;
	for (unsigned i = 0; i < EMU_ROCE_RX_BATCH; i++) {
		datagram_msg(&sl->dg[i].hdr, &sl->sa[i], &sl->iov[i], b->pkt[i], EMU_ROCE_MAX_PKT + 1);
		sl->dg[i].hdr.msg_control = sl->cbuf[i];
		sl->dg[i].hdr.msg_controllen = sizeof(sl->cbuf[i]);
	}
	b->n = 0;
	/* MSG_TRUNC: each length is the datagram's real one, as emu_roce_sock_recv */
	n = plat_recv_many(fd, sl->dg, EMU_ROCE_RX_BATCH, flags | MSG_TRUNC);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		b->len[i] = sl->dg[i].len;
		rx_envelope(daddr, &sl->sa[i], &sl->dg[i].hdr, &b->env[i], &b->seg[i]);
	}
	b->n = (unsigned)n;
	return n;
}

int emu_roce_sock_recv_many(struct emu_roce_sock *s, struct emu_roce_rx_batch *b, int flags)
{
	if (!s || !b || !b->slots)
		return -EINVAL;
	return recv_many_fd(s->fd, s->ipv4, b, flags);
}

/* An IPv4 multicast group's receiving socket for the port at ifaddr (RoCE v2 carries a
 * multicast GID ::ffff:G as IPv4 destination G, IBTA A17.4.1; Linux cma_iboe_set_mgid).
 * A UDP socket bound to addr:4791 receives only datagrams sent to addr (Linux
 * __udp_is_mcast_sock), so the port's own 4791 socket never sees a group's packets:
 * each group gets a socket bound to G:4791, SO_REUSEADDR so that every port of every
 * process that joined G binds it too (each then gets its own copy, as ports behind a
 * switch each get the frame), and IP_ADD_MEMBERSHIP on the interface of ifaddr, which
 * for 127/8 is the loopback interface: it joins G there without any route or interface
 * flag to set (checked on Linux 6.x, docs/architecture.md section 10). */
int emu_roce_mc_open(uint32_t ifaddr, uint32_t group)
{
	struct sockaddr_in sa;
	struct ip_mreq mr;
	int one = 1, fd = plat_socket(AF_INET, SOCK_DGRAM, 0), rc = 0;

	if (fd < 0)
		return fd;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(EMU_ROCE_PORT);
	sa.sin_addr.s_addr = htonl(group);
	memset(&mr, 0, sizeof(mr));
	mr.imr_multiaddr.s_addr = htonl(group);
	mr.imr_interface.s_addr = htonl(ifaddr);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0)
		rc = -errno;
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

int emu_roce_mc_recv_many(int fd, uint32_t group, struct emu_roce_rx_batch *b, int flags)
{
	if (fd < 0 || !b || !b->slots)
		return -EINVAL;
	return recv_many_fd(fd, group, b, flags);
}
