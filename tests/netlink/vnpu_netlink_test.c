// SPDX-License-Identifier: GPL-2.0
/*
 * vnpu telemetry over generic netlink: DEV_GET and CLIENT_GET figures move
 * as expected after known work, events reach a listener, the strict
 * policies reject bad requests, a listener that never reads does not block
 * the driver, and dumps cover many devices and clients. Device-wide
 * counters and debugfs knobs: this program runs alone.
 */
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <linux/vnpu_netlink.h>

#include "vnpu_test.h"

struct dev_fig {
	uint32_t index, tiles, util, bos, clients;
	uint64_t busy, submitted, completed, failed, timedout, cancelled;
	uint64_t resets, mem_used, mem_limit, up, down;
	uint64_t fpu_sections, fpu_ns, fpu_max_ns;
	uint32_t fpu_max_opcode, fpu_max_layer_op;
	char node[32];
};

struct reply {
	struct dev_fig dev[8];
	int num_dev;
	int num_clients;
	int my_clients;		/* clients with our pid and comm */
	uint64_t my_jobs;
	int err;
	int done;		/* the ACK, the dump's end or an error came */
};

/* Our comm as the kernel keeps it (TASK_COMM_LEN - 1 characters). */
static int is_my_comm(const char *comm)
{
	return !strncmp(comm, program_invocation_short_name, 15);
}

static struct nl_sock *nl_open(int *family)
{
	struct nl_sock *sk = nl_socket_alloc();

	if (!sk)
		return NULL;
	if (genl_connect(sk) || (*family = genl_ctrl_resolve(sk, VNPU_NL_FAMILY_NAME)) < 0) {
		nl_socket_free(sk);
		return NULL;
	}
	return sk;
}

static uint64_t a64(struct nlattr **a, int t)
{
	return a[t] ? nla_get_u64(a[t]) : ~0ull;
}

static uint32_t a32(struct nlattr **a, int t)
{
	return a[t] ? nla_get_u32(a[t]) : ~0u;
}

static int on_reply(struct nl_msg *msg, void *arg)
{
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));
	struct nlattr *a[VNPU_NL_A_MAX + 1];
	struct reply *r = arg;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, a, VNPU_NL_A_MAX, NULL))
		return NL_SKIP;
	if (gh->cmd == VNPU_NL_CMD_DEV_GET && r->num_dev < 8) {
		struct dev_fig *d = &r->dev[r->num_dev++];

		d->index = a32(a, VNPU_NL_A_DEV_INDEX);
		d->tiles = a32(a, VNPU_NL_A_DEV_TILES);
		d->util = a32(a, VNPU_NL_A_DEV_UTIL);
		d->bos = a32(a, VNPU_NL_A_DEV_BOS);
		d->clients = a32(a, VNPU_NL_A_DEV_CLIENTS);
		d->busy = a64(a, VNPU_NL_A_DEV_BUSY_NS);
		d->submitted = a64(a, VNPU_NL_A_DEV_JOBS_SUBMITTED);
		d->completed = a64(a, VNPU_NL_A_DEV_JOBS_COMPLETED);
		d->failed = a64(a, VNPU_NL_A_DEV_JOBS_FAILED);
		d->timedout = a64(a, VNPU_NL_A_DEV_JOBS_TIMEDOUT);
		d->cancelled = a64(a, VNPU_NL_A_DEV_JOBS_CANCELLED);
		d->resets = a64(a, VNPU_NL_A_DEV_RESETS);
		d->mem_used = a64(a, VNPU_NL_A_DEV_MEM_USED);
		d->mem_limit = a64(a, VNPU_NL_A_DEV_MEM_LIMIT);
		d->up = a64(a, VNPU_NL_A_DEV_BYTES_UPLOADED);
		d->down = a64(a, VNPU_NL_A_DEV_BYTES_DOWNLOADED);
		d->fpu_sections = a64(a, VNPU_NL_A_DEV_FPU_SECTIONS);
		d->fpu_ns = a64(a, VNPU_NL_A_DEV_FPU_NS);
		d->fpu_max_ns = a64(a, VNPU_NL_A_DEV_FPU_MAX_NS);
		d->fpu_max_opcode = a32(a, VNPU_NL_A_DEV_FPU_MAX_OPCODE);
		d->fpu_max_layer_op = a32(a, VNPU_NL_A_DEV_FPU_MAX_LAYER_OP);
		if (a[VNPU_NL_A_DEV_NODE])
			snprintf(d->node, sizeof(d->node), "%s",
				 nla_get_string(a[VNPU_NL_A_DEV_NODE]));
	} else if (gh->cmd == VNPU_NL_CMD_CLIENT_GET) {
		char comm[32] = "";

		r->num_clients++;
		if (a[VNPU_NL_A_CLIENT_COMM])
			snprintf(comm, sizeof(comm), "%s",
				 nla_get_string(a[VNPU_NL_A_CLIENT_COMM]));
		if (a32(a, VNPU_NL_A_CLIENT_PID) == (uint32_t)getpid() &&
		    is_my_comm(comm)) {
			r->my_clients++;
			r->my_jobs += a64(a, VNPU_NL_A_CLIENT_JOBS);
		}
	}
	return NL_OK;
}

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *err, void *arg)
{
	struct reply *r = arg;

	(void)nla;
	r->err = err->error;
	r->done = 1;
	return NL_STOP;
}

static int on_done(struct nl_msg *msg, void *arg)
{
	struct reply *r = arg;

	(void)msg;
	r->done = 1;
	return NL_STOP;
}

/*
 * Send @cmd with the raw attribute bytes @attrs (already nlattr-framed) and
 * collect the replies; returns 0 or the kernel's -errno.
 */
static int nl_request(struct nl_sock *sk, int family, uint8_t cmd, int flags,
		      const void *attrs, size_t len, struct reply *r)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	void *hdr;
	int ret;

	memset(r, 0, sizeof(*r));
	if (!msg || !cb)
		return -ENOMEM;
	hdr = genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0,
			  flags | NLM_F_ACK, cmd, VNPU_NL_FAMILY_VERSION);
	if (!hdr || (len && nlmsg_append(msg, (void *)attrs, len, NLA_ALIGNTO))) {
		nlmsg_free(msg);
		nl_cb_put(cb);
		return -ENOMEM;
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_reply, r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_done, r);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_done, r);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, r);
	ret = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	/* A reply, then its ACK (do) or the end of the dump. */
	while (ret >= 0 && !r->done)
		ret = nl_recvmsgs(sk, cb);
	nl_cb_put(cb);
	if (r->err)
		return r->err;
	return ret < 0 ? -EIO : 0;
}

/* One attribute in netlink framing, padded; returns its length. */
static size_t put_attr(void *buf, uint16_t type, const void *data, uint16_t len)
{
	struct nlattr *a = buf;

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)buf + NLA_HDRLEN, data, len);
	memset((char *)buf + NLA_HDRLEN + len, 0, NLA_ALIGN(len) - len);
	return NLA_HDRLEN + NLA_ALIGN(len);
}

static int dev_dump(struct nl_sock *sk, int family, struct reply *r)
{
	return nl_request(sk, family, VNPU_NL_CMD_DEV_GET, NLM_F_DUMP, NULL, 0, r);
}

static int dev_get_index(struct nl_sock *sk, int family, uint32_t index,
			 struct reply *r)
{
	char buf[16];
	size_t n = put_attr(buf, VNPU_NL_A_DEV_INDEX, &index, 4);

	return nl_request(sk, family, VNPU_NL_CMD_DEV_GET, 0, buf, n, r);
}

static struct dev_fig dev0(struct __test_metadata *_metadata,
			   struct nl_sock *sk, int family)
{
	struct reply r;

	ASSERT_EQ(0, dev_get_index(sk, family, 0, &r));
	ASSERT_EQ(1, r.num_dev);
	return r.dev[0];
}

FIXTURE(nl) {
	int fd;
	int family;
	struct nl_sock *sk;
};

FIXTURE_SETUP(nl)
{
	VNPU_OPEN_OR_SKIP(self->fd);
	self->sk = nl_open(&self->family);
	ASSERT_NE(NULL, self->sk);
}

FIXTURE_TEARDOWN(nl)
{
	if (self->sk)
		nl_socket_free(self->sk);
	if (self->fd >= 0)
		close(self->fd);
	vnpu_debugfs_write("inject_fault", "0");
}

TEST_F(nl, events_group_resolves)
{
	ASSERT_LE(0, genl_ctrl_resolve_grp(self->sk, VNPU_NL_FAMILY_NAME,
					   VNPU_NL_MCGRP_EVENTS));
}

TEST_F(nl, dev_get_dump_matches_get_param)
{
	struct reply r;

	ASSERT_EQ(0, dev_dump(self->sk, self->family, &r));
	ASSERT_LE(1, r.num_dev);
	ASSERT_EQ(0, r.dev[0].index);
	ASSERT_EQ(0, strncmp(r.dev[0].node, "renderD", 7));
	ASSERT_EQ(get_param(_metadata, self->fd, DRM_VNPU_PARAM_NUM_TILES),
		  r.dev[0].tiles);
	ASSERT_EQ(get_param(_metadata, self->fd, DRM_VNPU_PARAM_MEM_LIMIT),
		  r.dev[0].mem_limit);
	ASSERT_EQ(get_param(_metadata, self->fd, DRM_VNPU_PARAM_RESET_COUNT),
		  r.dev[0].resets);
	ASSERT_LE(1, r.dev[0].clients);
	ASSERT_GE(1000, r.dev[0].util);
}

TEST_F(nl, dev_get_by_node)
{
	struct reply r;
	char buf[64];
	struct dev_fig d = dev0(_metadata, self->sk, self->family);
	size_t n = put_attr(buf, VNPU_NL_A_DEV_NODE, d.node, strlen(d.node) + 1);

	ASSERT_EQ(0, nl_request(self->sk, self->family, VNPU_NL_CMD_DEV_GET, 0,
				buf, n, &r));
	ASSERT_EQ(1, r.num_dev);
	ASSERT_EQ(0, r.dev[0].index);
}

TEST_F(nl, dev_get_no_such_device)
{
	struct reply r;

	ASSERT_EQ(-ENODEV, dev_get_index(self->sk, self->family, 7, &r));
	ASSERT_EQ(-ENODEV, dev_get_index(self->sk, self->family, 1000000, &r));
}

TEST_F(nl, dev_get_without_selector)
{
	struct reply r;

	ASSERT_EQ(-EINVAL, nl_request(self->sk, self->family, VNPU_NL_CMD_DEV_GET,
				      0, NULL, 0, &r));
}

TEST_F(nl, policy_unknown_attribute)
{
	uint32_t v = 0;
	char buf[16];
	struct reply r;
	size_t n = put_attr(buf, VNPU_NL_A_DEV_TILES, &v, 4);

	ASSERT_EQ(-EINVAL, nl_request(self->sk, self->family, VNPU_NL_CMD_DEV_GET,
				      0, buf, n, &r));
	n = put_attr(buf, VNPU_NL_A_MAX + 5, &v, 4);
	ASSERT_EQ(-EINVAL, nl_request(self->sk, self->family, VNPU_NL_CMD_DEV_GET,
				      NLM_F_DUMP, buf, n, &r));
}

TEST_F(nl, policy_wrong_type)
{
	uint64_t v = 0;
	char buf[16];
	struct reply r;
	size_t n = put_attr(buf, VNPU_NL_A_DEV_INDEX, &v, 8);

	ASSERT_GT(0, nl_request(self->sk, self->family, VNPU_NL_CMD_DEV_GET, 0,
				buf, n, &r));
	n = put_attr(buf, VNPU_NL_A_DEV_INDEX, &v, 2);
	ASSERT_GT(0, nl_request(self->sk, self->family, VNPU_NL_CMD_DEV_GET, 0,
				buf, n, &r));
	n = put_attr(buf, VNPU_NL_A_DEV_INDEX, &v, 8);
	ASSERT_GT(0, nl_request(self->sk, self->family, VNPU_NL_CMD_CLIENT_GET,
				NLM_F_DUMP, buf, n, &r));
}

TEST_F(nl, policy_oversized_string)
{
	const char *node = "renderD128-and-a-lot-more-than-fifteen";
	char buf[64];
	struct reply r;
	size_t n = put_attr(buf, VNPU_NL_A_DEV_NODE, node, strlen(node) + 1);

	ASSERT_GT(0, nl_request(self->sk, self->family, VNPU_NL_CMD_DEV_GET, 0,
				buf, n, &r));
}

TEST_F(nl, policy_unterminated_string)
{
	char buf[64];
	struct reply r;
	size_t n = put_attr(buf, VNPU_NL_A_DEV_NODE, "renderD128", 10);

	ASSERT_GT(0, nl_request(self->sk, self->family, VNPU_NL_CMD_DEV_GET, 0,
				buf, n, &r));
}

TEST_F(nl, unknown_command)
{
	struct reply r;

	ASSERT_GT(0, nl_request(self->sk, self->family, VNPU_NL_CMD_JOB_FAULT, 0,
				NULL, 0, &r));
	ASSERT_GT(0, nl_request(self->sk, self->family, 99, 0, NULL, 0, &r));
}

TEST_F(nl, client_get_many_clients)
{
	int fds[20], i;
	struct reply r;
	char buf[16];
	uint32_t dev = 0;
	size_t n = put_attr(buf, VNPU_NL_A_DEV_INDEX, &dev, 4);

	for (i = 0; i < 20; i++) {
		fds[i] = vnpu_open(0);
		ASSERT_LE(0, fds[i]);
	}
	ASSERT_EQ(0, nl_request(self->sk, self->family, VNPU_NL_CMD_CLIENT_GET,
				NLM_F_DUMP, NULL, 0, &r));
	ASSERT_EQ(21, r.my_clients);
	ASSERT_EQ(0, nl_request(self->sk, self->family, VNPU_NL_CMD_CLIENT_GET,
				NLM_F_DUMP, buf, n, &r));
	ASSERT_EQ(21, r.my_clients);
	for (i = 0; i < 20; i++)
		close(fds[i]);
	ASSERT_EQ(0, nl_request(self->sk, self->family, VNPU_NL_CMD_CLIENT_GET,
				NLM_F_DUMP, NULL, 0, &r));
	ASSERT_EQ(1, r.my_clients);
}

/*
 * Random requests (half of them any command, do or dump, with up to three
 * attributes of any type, length and content; half of them real DEV_GET
 * and CLIENT_GET requests) while a child opens and closes files, so the
 * client dumps walk a changing list. Each gets an answer: replies then
 * the end, or an error; none hangs (a receive timeout would end the wait
 * with an error the test reports). After, the figures still add up.
 */
TEST_F_TIMEOUT(nl, random_requests_while_clients_change, 300)
{
	struct timeval tv = { .tv_sec = 20 };
	unsigned char buf[3 * (NLA_HDRLEN + 40)], data[40];
	uint64_t rng = 20261130;
	int i, k, ret, answered = 0, errors = 0;
	struct reply r;
	pid_t child;

	ASSERT_EQ(0, setsockopt(nl_socket_get_fd(self->sk), SOL_SOCKET, SO_RCVTIMEO,
				&tv, sizeof(tv)));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		int fds[30] = { 0 };

		for (i = 0;; i++) {
			k = i % 30;
			if (fds[k] > 0)
				close(fds[k]);
			fds[k] = vnpu_open(0);
		}
	}
	for (i = 0; i < 2000; i++) {
		size_t n = 0;
		int attrs, flags;
		uint8_t cmd;

		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		cmd = (uint8_t)(rng % (VNPU_NL_CMD_MAX + 3));
		flags = rng >> 8 & 1 ? NLM_F_DUMP : 0;
		attrs = (int)(rng >> 9 & 3);
		if (rng >> 11 & 1) {
			/* one of the two real requests, maybe for device 0 */
			uint32_t dev = 0;

			cmd = rng >> 12 & 1 ? VNPU_NL_CMD_DEV_GET : VNPU_NL_CMD_CLIENT_GET;
			flags = cmd == VNPU_NL_CMD_CLIENT_GET ? NLM_F_DUMP : flags;
			attrs = 0;
			if (rng >> 13 & 1 || (cmd == VNPU_NL_CMD_DEV_GET && !flags))
				n = put_attr(buf, VNPU_NL_A_DEV_INDEX, &dev, 4);
		}
		for (k = 0; k < attrs; k++) {
			uint16_t len, type;

			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			type = (uint16_t)(rng % (VNPU_NL_A_MAX + 4));
			len = (uint16_t)(rng >> 16) % sizeof(data);
			for (size_t b = 0; b < sizeof(data); b++)
				data[b] = (unsigned char)(rng >> (b % 7 * 8));
			n += put_attr(buf + n, type, data, len);
		}
		ret = nl_request(self->sk, self->family, cmd, flags, buf, n, &r);
		if (ret == -EIO)
			break;	/* nothing came back in time, or the socket failed */
		answered++;
		errors += ret < 0;
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	TH_LOG("2000 random requests: %d answered, %d of them with an error", answered,
	       errors);
	ASSERT_EQ(2000, answered);

	/* Every file of the child is gone: ours is the only client of ours. */
	ASSERT_EQ(0, nl_request(self->sk, self->family, VNPU_NL_CMD_CLIENT_GET,
				NLM_F_DUMP, NULL, 0, &r));
	ASSERT_EQ(1, r.my_clients);
	ASSERT_EQ(0, dev_dump(self->sk, self->family, &r));
	ASSERT_LE(1, r.num_dev);
}

/* N jobs -> N submitted and completed; copies and BOs counted. */
TEST_F(nl, figures_move_after_jobs)
{
	struct dev_fig a = dev0(_metadata, self->sk, self->family), b;
	struct drm_vnpu_slot slot = { .flags = DRM_VNPU_SLOT_WRITE };
	struct stream s = { 0 };
	char data[5000] = { 0 };
	struct reply r;
	uint64_t ids[10];
	int i;

	slot.handle = bo_create(_metadata, self->fd, 1 << 20);
	bo_upload(_metadata, self->fd, slot.handle, 0, data, sizeof(data));
	bo_download(_metadata, self->fd, slot.handle, 0, data, 3000);
	stream_fill(&s, tensor_1d(0, VNPU_DTYPE_U32, 0, 1 << 18), 1);
	for (i = 0; i < 10; i++)
		ids[i] = run_stream(_metadata, self->fd, &s, &slot, 1);
	for (i = 0; i < 10; i++)
		ASSERT_EQ(DRM_VNPU_JOB_OK, wait_job(_metadata, self->fd, ids[i]));

	b = dev0(_metadata, self->sk, self->family);
	ASSERT_EQ(a.submitted + 10, b.submitted);
	ASSERT_EQ(a.completed + 10, b.completed);
	ASSERT_EQ(a.failed, b.failed);
	ASSERT_LT(a.busy, b.busy);
	/* The data BO and its upload, plus each job's command BO upload. */
	ASSERT_LE(a.up + sizeof(data), b.up);
	ASSERT_EQ(a.down + 3000, b.down);
	ASSERT_EQ(a.bos + 1, b.bos);
	ASSERT_LE(a.mem_used + (1 << 20), b.mem_used);

	ASSERT_EQ(0, nl_request(self->sk, self->family, VNPU_NL_CMD_CLIENT_GET,
				NLM_F_DUMP, NULL, 0, &r));
	ASSERT_EQ(10, r.my_jobs);
}

/*
 * A GEMM job adds FPU sections; DEV_GET reports the figures debugfs shows
 * (this program runs alone: nothing runs between the two reads), each
 * attribute present, the longest section no longer than their total.
 */
TEST_F(nl, fpu_figures_after_layer)
{
	struct dev_fig a = dev0(_metadata, self->sk, self->family), b;
	struct drm_vnpu_slot slot = { .flags = DRM_VNPU_SLOT_READ |
					       DRM_VNPU_SLOT_WRITE };
	struct stream s = { 0 };
	struct fpu_figures d;

	ASSERT_NE(~0ull, a.fpu_sections);
	ASSERT_NE(~0ull, a.fpu_ns);
	ASSERT_NE(~0ull, a.fpu_max_ns);
	ASSERT_NE(~0u, a.fpu_max_opcode);
	ASSERT_NE(~0u, a.fpu_max_layer_op);

	slot.handle = bo_create(_metadata, self->fd, 1 << 20);
	stream_gemm(&s, 0, 128, 128, 128);
	ASSERT_EQ(DRM_VNPU_JOB_OK,
		  wait_job(_metadata, self->fd,
			   run_stream(_metadata, self->fd, &s, &slot, 1)));
	b = dev0(_metadata, self->sk, self->family);
	ASSERT_LT(a.fpu_sections, b.fpu_sections);
	ASSERT_LT(a.fpu_ns, b.fpu_ns);
	ASSERT_LT(0, b.fpu_max_ns);
	ASSERT_LE(a.fpu_max_ns, b.fpu_max_ns);
	ASSERT_LE(b.fpu_max_ns, b.fpu_ns);
	ASSERT_NE(VNPU_CMD_NOP, b.fpu_max_opcode);
	ASSERT_EQ(b.fpu_max_opcode == VNPU_CMD_LAYER, b.fpu_max_layer_op != 0);

	if (vnpu_fpu_figures(&d))
		SKIP(return, "no vnpu debugfs");
	ASSERT_EQ(b.fpu_sections, d.sections);
	ASSERT_EQ(b.fpu_ns, d.ns);
	ASSERT_EQ(b.fpu_max_ns, d.max_ns);
	ASSERT_EQ(b.fpu_max_opcode, d.max_opcode);
	ASSERT_EQ(b.fpu_max_layer_op, d.max_layer_op);
}

struct listener {
	struct nl_sock *sk;
	uint8_t cmd[64];
	uint64_t job[64];
	uint32_t pid[64];
	int n;
};

static int on_event(struct nl_msg *msg, void *arg)
{
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));
	struct nlattr *a[VNPU_NL_A_MAX + 1];
	struct listener *l = arg;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, a, VNPU_NL_A_MAX, NULL) || l->n >= 64)
		return NL_SKIP;
	l->cmd[l->n] = gh->cmd;
	l->job[l->n] = a64(a, VNPU_NL_A_JOB_ID);
	l->pid[l->n] = a32(a, VNPU_NL_A_CLIENT_PID);
	l->n++;
	return NL_OK;
}

static struct nl_sock *listen_events(struct listener *l)
{
	int family, grp;
	struct nl_sock *sk = nl_open(&family);

	memset(l, 0, sizeof(*l));
	if (!sk)
		return NULL;
	grp = genl_ctrl_resolve_grp(sk, VNPU_NL_FAMILY_NAME, VNPU_NL_MCGRP_EVENTS);
	if (grp < 0 || nl_socket_add_membership(sk, grp)) {
		nl_socket_free(sk);
		return NULL;
	}
	nl_socket_disable_seq_check(sk);
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_event, l);
	nl_socket_set_nonblocking(sk);
	l->sk = sk;
	return sk;
}

static void drain_events(struct listener *l)
{
	while (nl_recvmsgs_default(l->sk) >= 0)
		;
}

static int has_event(struct listener *l, uint8_t cmd, uint64_t job)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (l->cmd[i] == cmd && l->job[i] == job &&
		    l->pid[i] == (uint32_t)getpid())
			return 1;
	return 0;
}

/* A hang: utilization while it spins, then timeout + reset + events. */
TEST_F_TIMEOUT(nl, hang_counts_and_events, 120)
{
	struct dev_fig a = dev0(_metadata, self->sk, self->family), b;
	struct listener l;
	struct stream s = { 0 };
	uint64_t id;

	ASSERT_NE(NULL, listen_events(&l));
	stream_spin(&s);
	id = run_stream(_metadata, self->fd, &s, NULL, 0);
	usleep(1200000);
	b = dev0(_metadata, self->sk, self->family);
	ASSERT_LE(500, b.util);
	ASSERT_EQ(DRM_VNPU_JOB_TIMEOUT, wait_job(_metadata, self->fd, id));

	b = dev0(_metadata, self->sk, self->family);
	ASSERT_EQ(a.timedout + 1, b.timedout);
	ASSERT_EQ(a.resets + 1, b.resets);
	drain_events(&l);
	ASSERT_EQ(1, has_event(&l, VNPU_NL_CMD_JOB_TIMEOUT, id));
	ASSERT_EQ(1, has_event(&l, VNPU_NL_CMD_DEVICE_RESET, id));
	nl_socket_free(l.sk);
}

TEST_F(nl, fault_event)
{
	struct drm_vnpu_slot slot = { .flags = DRM_VNPU_SLOT_WRITE };
	struct stream s = { 0 };
	struct listener l;
	uint64_t id;

	if (vnpu_debugfs_write("inject_fault", "1"))
		SKIP(return, "no vnpu debugfs");
	ASSERT_NE(NULL, listen_events(&l));
	slot.handle = bo_create(_metadata, self->fd, 4096);
	stream_fill(&s, tensor_1d(0, VNPU_DTYPE_U32, 0, 16), 1);
	id = run_stream(_metadata, self->fd, &s, &slot, 1);
	ASSERT_EQ(DRM_VNPU_JOB_FAULT, wait_job(_metadata, self->fd, id));
	drain_events(&l);
	ASSERT_EQ(1, has_event(&l, VNPU_NL_CMD_JOB_FAULT, id));
	nl_socket_free(l.sk);
}

TEST_F(nl, memory_limit_event)
{
	uint64_t limit = get_param(_metadata, self->fd, DRM_VNPU_PARAM_MEM_LIMIT);
	uint64_t used;
	struct listener l;

	/* Something is charged, so limit - used + 4096 is a valid size. */
	bo_create(_metadata, self->fd, 1 << 20);
	used = get_param(_metadata, self->fd, DRM_VNPU_PARAM_MEM_USED);

	ASSERT_NE(NULL, listen_events(&l));
	bo_create_err(_metadata, self->fd, ENOMEM, limit - used + 4096, 0);
	drain_events(&l);
	ASSERT_EQ(1, has_event(&l, VNPU_NL_CMD_MEMORY_LIMIT, 0));
	nl_socket_free(l.sk);
}

/* 100 events to a listener with a tiny buffer that never reads. */
TEST_F_TIMEOUT(nl, listener_never_reads, 120)
{
	struct drm_vnpu_slot slot = { .flags = DRM_VNPU_SLOT_WRITE };
	struct stream s = { 0 };
	struct listener l;
	uint64_t ids[100];
	int i;

	if (vnpu_debugfs_write("inject_fault", "100"))
		SKIP(return, "no vnpu debugfs");
	ASSERT_NE(NULL, listen_events(&l));
	nl_socket_set_buffer_size(l.sk, 1024, 1024);
	slot.handle = bo_create(_metadata, self->fd, 4096);
	stream_fill(&s, tensor_1d(0, VNPU_DTYPE_U32, 0, 16), 1);
	for (i = 0; i < 100; i++)
		ids[i] = run_stream(_metadata, self->fd, &s, &slot, 1);
	for (i = 0; i < 100; i++)
		ASSERT_EQ(DRM_VNPU_JOB_FAULT, wait_job(_metadata, self->fd, ids[i]));
	/* The driver went on; the listener lost what did not fit. */
	drain_events(&l);
	ASSERT_GT(100, l.n);
	nl_socket_free(l.sk);
}

/* The first @size - 1 bytes of what `@smi @args` prints; its exit status. */
static int smi_output(const char *smi, const char *args, char *out,
		      size_t size)
{
	char cmd[512];
	size_t n;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s %s", smi, args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	n = fread(out, 1, size - 1, p);
	out[n] = 0;
	return pclose(p);
}

TEST_F(nl, vnpu_smi_json)
{
	const char *smi = getenv("VNPU_SMI");
	char cmd[512], out[4096];

	if (!smi)
		SKIP(return, "VNPU_SMI not set");
	ASSERT_EQ(0, smi_output(smi, "--json", out, sizeof(out)));
	ASSERT_NE(NULL, strstr(out, "{\"devices\":[{\"index\":0,\"node\":\"renderD"));
	ASSERT_NE(NULL, strstr(out, "\"fpu_max_ns\":"));

	ASSERT_EQ(0, smi_output(smi, "-d 0", out, sizeof(out)));
	ASSERT_NE(NULL, strstr(out, "FPUMAX(us)"));

	ASSERT_EQ(0, smi_output(smi, "-c", out, sizeof(out)));
	ASSERT_NE(NULL, strstr(out, "vnpu_netlink_te"));

	snprintf(cmd, sizeof(cmd), "%s -d 7 2>/dev/null", smi);
	ASSERT_NE(0, system(cmd));
}

/* Reload with four devices: the dump lists them all, then restore. */
static int reload(const char *extra)
{
	const char *ko = getenv("VNPU_VM_KO");
	const char *params = getenv("VNPU_VM_PARAMS");
	char cmd[1024];

	if (system("rmmod vnpu"))
		return -1;
	snprintf(cmd, sizeof(cmd), "insmod %s %s %s", ko, params ? params : "",
		 extra);
	return system(cmd);
}

TEST(many_devices_dump)
{
	struct nl_sock *sk;
	struct reply r;
	int family, i, fd;

	if (!getenv("VNPU_VM_KO"))
		SKIP(return, "not in the VM harness (VNPU_VM_KO unset)");
	fd = vnpu_open(0);
	if (fd < 0)
		SKIP(return, "no vnpu device");
	close(fd);
	ASSERT_EQ(0, reload("num_devices=4"));
	sk = nl_open(&family);
	ASSERT_NE(NULL, sk);
	ASSERT_EQ(0, dev_dump(sk, family, &r));
	ASSERT_EQ(4, r.num_dev);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(i, r.dev[i].index);
		if (i)
			ASSERT_NE(0, strcmp(r.dev[i].node, r.dev[i - 1].node));
	}
	fd = vnpu_open(3);
	ASSERT_LE(0, fd);
	ASSERT_EQ(3, get_param(_metadata, fd, DRM_VNPU_PARAM_DEVICE_INDEX));
	ASSERT_EQ(0, nl_request(sk, family, VNPU_NL_CMD_CLIENT_GET, NLM_F_DUMP,
				NULL, 0, &r));
	ASSERT_EQ(1, r.my_clients);
	close(fd);
	nl_socket_free(sk);
	ASSERT_EQ(0, reload(""));
}

/*
 * vnpu-smi names the command of the longest FPU section: "-" on a freshly
 * loaded module, "LAYER GEMM" after one GEMM job (nothing else ran on it).
 */
TEST(vnpu_smi_fpu_command)
{
	const char *smi = getenv("VNPU_SMI");
	struct drm_vnpu_slot slot = { .flags = DRM_VNPU_SLOT_READ |
					       DRM_VNPU_SLOT_WRITE };
	struct stream s = { 0 };
	char out[4096];
	int fd;

	if (!smi)
		SKIP(return, "VNPU_SMI not set");
	if (!getenv("VNPU_VM_KO"))
		SKIP(return, "not in the VM harness (VNPU_VM_KO unset)");
	ASSERT_EQ(0, reload(""));
	ASSERT_EQ(0, smi_output(smi, "--json -d 0", out, sizeof(out)));
	ASSERT_NE(NULL, strstr(out, "\"fpu_max_ns\":0,"));
	ASSERT_NE(NULL, strstr(out, "\"fpu_max_command\":\"-\""));

	fd = vnpu_open(0);
	ASSERT_LE(0, fd);
	slot.handle = bo_create(_metadata, fd, 1 << 20);
	stream_gemm(&s, 0, 128, 128, 128);
	ASSERT_EQ(DRM_VNPU_JOB_OK,
		  wait_job(_metadata, fd, run_stream(_metadata, fd, &s, &slot, 1)));
	close(fd);
	ASSERT_EQ(0, smi_output(smi, "--json -d 0", out, sizeof(out)));
	ASSERT_NE(NULL, strstr(out, "\"fpu_max_command\":\"LAYER GEMM\""));
	ASSERT_EQ(0, smi_output(smi, "-d 0", out, sizeof(out)));
	ASSERT_NE(NULL, strstr(out, "FPUMAX-CMD"));
	ASSERT_NE(NULL, strstr(out, " LAYER GEMM\n"));
}

TEST_HARNESS_MAIN
