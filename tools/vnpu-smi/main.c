// SPDX-License-Identifier: GPL-2.0
/*
 * vnpu-smi: live figures of the vnpu devices, their clients and events,
 * read from the driver's generic netlink family "vnpu" (libnl-genl-3).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <drm/vnpu_cmd.h>
#include <drm/vnpu_layers.h>
#include <linux/vnpu_netlink.h>

struct smi {
	struct nl_sock *sock;
	int family;
	bool json;
	int rows;		/* rows printed by the current dump */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: vnpu-smi [OPTIONS]\n"
		"\n"
		"Figures of the vnpu devices (vnpu.ko's netlink family \"vnpu\").\n"
		"FPUMAX is the longest FPU section a tile ran: the longest time\n"
		"the device kept one CPU from scheduling anything else;\n"
		"FPUMAX-CMD the command that ran it (LAYER GEMM, FILL, ...).\n"
		"\n"
		"  -d, --device IDX   only device IDX\n"
		"  -c, --clients      list the open files (clients) instead\n"
		"  -l, --loop SEC     refresh every SEC seconds until interrupted\n"
		"  -e, --events       print fault, timeout, reset and memory events\n"
		"                     as they arrive, until interrupted\n"
		"  -j, --json         JSON output (one object per line with -l/-e)\n"
		"  -h, --help         this text\n");
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t get_u64(struct nlattr **a, int type)
{
	return a[type] ? nla_get_u64(a[type]) : 0;
}

static uint32_t get_u32(struct nlattr **a, int type)
{
	return a[type] ? nla_get_u32(a[type]) : 0;
}

static const char *get_str(struct nlattr **a, int type)
{
	return a[type] ? nla_get_string(a[type]) : "";
}

static int parse(struct nl_msg *msg, struct nlattr **a)
{
	return genlmsg_parse(nlmsg_hdr(msg), 0, a, VNPU_NL_A_MAX, NULL);
}

static double mib(uint64_t bytes)
{
	return bytes / (1024.0 * 1024.0);
}

/*
 * The command that ran the longest FPU section, by name ("LAYER GEMM"),
 * "-" before any ran; numbers this tool does not know stay numbers.
 */
static const char *fpu_command(struct nlattr **a, char *buf, size_t size)
{
	static const char *const cmds[] = {
		[VNPU_CMD_NOP] = "NOP", [VNPU_CMD_FILL] = "FILL",
		[VNPU_CMD_COPY] = "COPY", [VNPU_CMD_SPIN] = "SPIN",
		[VNPU_CMD_LAYER] = "LAYER",
	};
	static const char *const ops[VNPU_LAYER_OP_LAST + 1] = {
		[VNPU_LAYER_GEMM] = "GEMM", [VNPU_LAYER_CONV] = "CONV",
		[VNPU_LAYER_POOL] = "POOL", [VNPU_LAYER_BINARY] = "BINARY",
		[VNPU_LAYER_WHERE] = "WHERE", [VNPU_LAYER_UNARY] = "UNARY",
		[VNPU_LAYER_SOFTMAX] = "SOFTMAX", [VNPU_LAYER_NORM] = "NORM",
		[VNPU_LAYER_REDUCE] = "REDUCE",
		[VNPU_LAYER_ARGREDUCE] = "ARGREDUCE",
		[VNPU_LAYER_RESIZE] = "RESIZE", [VNPU_LAYER_PAD] = "PAD",
		[VNPU_LAYER_GATHER] = "GATHER",
		[VNPU_LAYER_GATHER_ELEMENTS] = "GATHER_ELEMENTS",
		[VNPU_LAYER_CAST] = "CAST", [VNPU_LAYER_QUANTIZE] = "QUANTIZE",
		[VNPU_LAYER_DEQUANTIZE] = "DEQUANTIZE",
		[VNPU_LAYER_MATMUL_INTEGER] = "MATMUL_INTEGER",
		[VNPU_LAYER_QLINEAR_MATMUL] = "QLINEAR_MATMUL",
		[VNPU_LAYER_QLINEAR_CONV] = "QLINEAR_CONV",
		[VNPU_LAYER_SCATTER_ELEMENTS] = "SCATTER_ELEMENTS",
		[VNPU_LAYER_SCATTER_ND] = "SCATTER_ND",
		[VNPU_LAYER_GATHER_ND] = "GATHER_ND",
		[VNPU_LAYER_GRID_SAMPLE] = "GRID_SAMPLE",
		[VNPU_LAYER_TFIDF] = "TFIDF", [VNPU_LAYER_DET] = "DET",
		[VNPU_LAYER_ROI_ALIGN] = "ROI_ALIGN",
		[VNPU_LAYER_MAXPOOL_INDEX] = "MAXPOOL_INDEX",
		[VNPU_LAYER_CHAIN] = "CHAIN", [VNPU_LAYER_LSTM] = "LSTM",
		[VNPU_LAYER_QLINEAR_ADD] = "QLINEAR_ADD",
		[VNPU_LAYER_LOOKUP] = "LOOKUP",
		[VNPU_LAYER_ATTENTION] = "ATTENTION",
	};
	uint32_t cmd = get_u32(a, VNPU_NL_A_DEV_FPU_MAX_OPCODE);
	uint32_t op = get_u32(a, VNPU_NL_A_DEV_FPU_MAX_LAYER_OP);
	const char *name = cmd < sizeof(cmds) / sizeof(cmds[0]) ? cmds[cmd] : NULL;

	if (!get_u64(a, VNPU_NL_A_DEV_FPU_MAX_NS))
		return "-";
	if (!name)
		snprintf(buf, size, "opcode %u", cmd);
	else if (cmd != VNPU_CMD_LAYER)
		snprintf(buf, size, "%s", name);
	else if (op <= VNPU_LAYER_OP_LAST && ops[op])
		snprintf(buf, size, "LAYER %s", ops[op]);
	else
		snprintf(buf, size, "LAYER %u", op);
	return buf;
}

static int print_dev(struct nl_msg *msg, void *arg)
{
	struct smi *smi = arg;
	struct nlattr *a[VNPU_NL_A_MAX + 1];
	char cmd[48];

	if (parse(msg, a))
		return NL_SKIP;
	if (smi->json) {
		printf("%s{\"index\":%u,\"node\":\"%s\",\"tiles\":%u,"
		       "\"busy_ns\":%" PRIu64 ",\"utilization\":%.1f,"
		       "\"jobs_submitted\":%" PRIu64 ",\"jobs_completed\":%" PRIu64
		       ",\"jobs_failed\":%" PRIu64 ",\"jobs_timedout\":%" PRIu64
		       ",\"jobs_cancelled\":%" PRIu64 ",\"resets\":%" PRIu64
		       ",\"mem_used\":%" PRIu64 ",\"mem_limit\":%" PRIu64
		       ",\"bos\":%u,\"bytes_uploaded\":%" PRIu64
		       ",\"bytes_downloaded\":%" PRIu64 ",\"clients\":%u"
		       ",\"fpu_sections\":%" PRIu64 ",\"fpu_ns\":%" PRIu64
		       ",\"fpu_max_ns\":%" PRIu64 ",\"fpu_max_opcode\":%u"
		       ",\"fpu_max_layer_op\":%u,\"fpu_max_command\":\"%s\"}",
		       smi->rows ? "," : "",
		       get_u32(a, VNPU_NL_A_DEV_INDEX), get_str(a, VNPU_NL_A_DEV_NODE),
		       get_u32(a, VNPU_NL_A_DEV_TILES),
		       get_u64(a, VNPU_NL_A_DEV_BUSY_NS),
		       get_u32(a, VNPU_NL_A_DEV_UTIL) / 10.0,
		       get_u64(a, VNPU_NL_A_DEV_JOBS_SUBMITTED),
		       get_u64(a, VNPU_NL_A_DEV_JOBS_COMPLETED),
		       get_u64(a, VNPU_NL_A_DEV_JOBS_FAILED),
		       get_u64(a, VNPU_NL_A_DEV_JOBS_TIMEDOUT),
		       get_u64(a, VNPU_NL_A_DEV_JOBS_CANCELLED),
		       get_u64(a, VNPU_NL_A_DEV_RESETS),
		       get_u64(a, VNPU_NL_A_DEV_MEM_USED),
		       get_u64(a, VNPU_NL_A_DEV_MEM_LIMIT),
		       get_u32(a, VNPU_NL_A_DEV_BOS),
		       get_u64(a, VNPU_NL_A_DEV_BYTES_UPLOADED),
		       get_u64(a, VNPU_NL_A_DEV_BYTES_DOWNLOADED),
		       get_u32(a, VNPU_NL_A_DEV_CLIENTS),
		       get_u64(a, VNPU_NL_A_DEV_FPU_SECTIONS),
		       get_u64(a, VNPU_NL_A_DEV_FPU_NS),
		       get_u64(a, VNPU_NL_A_DEV_FPU_MAX_NS),
		       get_u32(a, VNPU_NL_A_DEV_FPU_MAX_OPCODE),
		       get_u32(a, VNPU_NL_A_DEV_FPU_MAX_LAYER_OP),
		       fpu_command(a, cmd, sizeof(cmd)));
	} else {
		if (!smi->rows)
			printf("%-3s %-11s %5s %6s %10s %9s %9s %6s %6s %6s %15s %6s %7s %15s %11s %s\n",
			       "DEV", "NODE", "TILES", "UTIL", "BUSY(s)",
			       "JOBS", "DONE", "FAILED", "TMOUT", "RESETS",
			       "MEM(MiB)", "BOS", "CLIENTS", "UP/DOWN(MiB)",
			       "FPUMAX(us)", "FPUMAX-CMD");
		printf("%-3u %-11s %5u %5.1f%% %10.3f %9" PRIu64 " %9" PRIu64
		       " %6" PRIu64 " %6" PRIu64 " %6" PRIu64 " %7.1f/%-7.0f %6u %7u %7.1f/%-7.1f"
		       " %11.1f %s\n",
		       get_u32(a, VNPU_NL_A_DEV_INDEX), get_str(a, VNPU_NL_A_DEV_NODE),
		       get_u32(a, VNPU_NL_A_DEV_TILES),
		       get_u32(a, VNPU_NL_A_DEV_UTIL) / 10.0,
		       get_u64(a, VNPU_NL_A_DEV_BUSY_NS) / 1e9,
		       get_u64(a, VNPU_NL_A_DEV_JOBS_SUBMITTED),
		       get_u64(a, VNPU_NL_A_DEV_JOBS_COMPLETED),
		       get_u64(a, VNPU_NL_A_DEV_JOBS_FAILED),
		       get_u64(a, VNPU_NL_A_DEV_JOBS_TIMEDOUT),
		       get_u64(a, VNPU_NL_A_DEV_RESETS),
		       mib(get_u64(a, VNPU_NL_A_DEV_MEM_USED)),
		       mib(get_u64(a, VNPU_NL_A_DEV_MEM_LIMIT)),
		       get_u32(a, VNPU_NL_A_DEV_BOS),
		       get_u32(a, VNPU_NL_A_DEV_CLIENTS),
		       mib(get_u64(a, VNPU_NL_A_DEV_BYTES_UPLOADED)),
		       mib(get_u64(a, VNPU_NL_A_DEV_BYTES_DOWNLOADED)),
		       get_u64(a, VNPU_NL_A_DEV_FPU_MAX_NS) / 1e3,
		       fpu_command(a, cmd, sizeof(cmd)));
	}
	smi->rows++;
	return NL_OK;
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static int print_client(struct nl_msg *msg, void *arg)
{
	struct smi *smi = arg;
	struct nlattr *a[VNPU_NL_A_MAX + 1];

	if (parse(msg, a))
		return NL_SKIP;
	if (smi->json) {
		printf("%s{\"device\":%u,\"client_id\":%" PRIu64 ",\"pid\":%u,\"comm\":",
		       smi->rows ? "," : "", get_u32(a, VNPU_NL_A_DEV_INDEX),
		       get_u64(a, VNPU_NL_A_CLIENT_ID), get_u32(a, VNPU_NL_A_CLIENT_PID));
		json_string(get_str(a, VNPU_NL_A_CLIENT_COMM));
		printf(",\"jobs\":%" PRIu64 ",\"busy_ns\":%" PRIu64 "}",
		       get_u64(a, VNPU_NL_A_CLIENT_JOBS),
		       get_u64(a, VNPU_NL_A_CLIENT_BUSY_NS));
	} else {
		if (!smi->rows)
			printf("%-3s %8s %8s %-16s %10s %12s\n", "DEV", "CLIENT",
			       "PID", "COMMAND", "JOBS", "BUSY(ms)");
		printf("%-3u %8" PRIu64 " %8u %-16s %10" PRIu64 " %12.3f\n",
		       get_u32(a, VNPU_NL_A_DEV_INDEX), get_u64(a, VNPU_NL_A_CLIENT_ID),
		       get_u32(a, VNPU_NL_A_CLIENT_PID), get_str(a, VNPU_NL_A_CLIENT_COMM),
		       get_u64(a, VNPU_NL_A_CLIENT_JOBS),
		       get_u64(a, VNPU_NL_A_CLIENT_BUSY_NS) / 1e6);
	}
	smi->rows++;
	return NL_OK;
}

static const char *event_name(uint8_t cmd)
{
	switch (cmd) {
	case VNPU_NL_CMD_JOB_FAULT:
		return "job_fault";
	case VNPU_NL_CMD_JOB_TIMEOUT:
		return "job_timeout";
	case VNPU_NL_CMD_DEVICE_RESET:
		return "device_reset";
	case VNPU_NL_CMD_MEMORY_LIMIT:
		return "memory_limit";
	}
	return "unknown";
}

static int print_event(struct nl_msg *msg, void *arg)
{
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));
	struct nlattr *a[VNPU_NL_A_MAX + 1];
	struct smi *smi = arg;
	struct timespec ts;

	if (parse(msg, a))
		return NL_SKIP;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (smi->json) {
		printf("{\"time\":%lld.%03ld,\"event\":\"%s\",\"device\":%u,"
		       "\"client_id\":%" PRIu64 ",\"pid\":%u,\"job\":%" PRIu64
		       ",\"reason\":",
		       (long long)ts.tv_sec, ts.tv_nsec / 1000000, event_name(gh->cmd),
		       get_u32(a, VNPU_NL_A_DEV_INDEX), get_u64(a, VNPU_NL_A_CLIENT_ID),
		       get_u32(a, VNPU_NL_A_CLIENT_PID), get_u64(a, VNPU_NL_A_JOB_ID));
		json_string(get_str(a, VNPU_NL_A_REASON));
		printf("}\n");
	} else {
		printf("%lld.%03ld %-13s dev %u client %" PRIu64 " pid %u job %" PRIu64
		       ": %s\n",
		       (long long)ts.tv_sec, ts.tv_nsec / 1000000, event_name(gh->cmd),
		       get_u32(a, VNPU_NL_A_DEV_INDEX), get_u64(a, VNPU_NL_A_CLIENT_ID),
		       get_u32(a, VNPU_NL_A_CLIENT_PID), get_u64(a, VNPU_NL_A_JOB_ID),
		       get_str(a, VNPU_NL_A_REASON));
	}
	fflush(stdout);
	return NL_OK;
}

/* Send one request, print its replies with @cb; 0 or a libnl error. */
static int request(struct smi *smi, uint8_t cmd, int flags, int device,
		   nl_recvmsg_msg_cb_t cb)
{
	struct nl_msg *msg = nlmsg_alloc();
	int ret;

	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, smi->family, 0, flags,
			 cmd, VNPU_NL_FAMILY_VERSION) ||
	    (device >= 0 && nla_put_u32(msg, VNPU_NL_A_DEV_INDEX, device))) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_socket_modify_cb(smi->sock, NL_CB_VALID, NL_CB_CUSTOM, cb, smi);
	ret = nl_send_auto(smi->sock, msg);
	nlmsg_free(msg);
	if (ret < 0)
		return ret;
	ret = nl_recvmsgs_default(smi->sock);
	/* A dump ends with its DONE; a do reply is followed by an ACK. */
	if (ret >= 0 && !(flags & NLM_F_DUMP))
		ret = nl_wait_for_ack(smi->sock);
	return ret < 0 ? ret : 0;
}

static int show(struct smi *smi, bool clients, int device)
{
	int ret;

	smi->rows = 0;
	if (smi->json)
		printf("%s", clients ? "{\"clients\":[" : "{\"devices\":[");
	if (clients)
		ret = request(smi, VNPU_NL_CMD_CLIENT_GET, NLM_F_DUMP, device,
			      print_client);
	else if (device >= 0)
		ret = request(smi, VNPU_NL_CMD_DEV_GET, 0, device, print_dev);
	else
		ret = request(smi, VNPU_NL_CMD_DEV_GET, NLM_F_DUMP, -1, print_dev);
	if (smi->json)
		printf("]}\n");
	else if (!smi->rows && !ret)
		printf(clients ? "no clients\n" : "no devices\n");
	fflush(stdout);
	if (ret)
		fprintf(stderr, "vnpu-smi: %s\n",
			device >= 0 && ret == -NLE_NODEV ? "no such device" :
			nl_geterror(ret));
	return ret;
}

static int events(struct smi *smi)
{
	int grp = genl_ctrl_resolve_grp(smi->sock, VNPU_NL_FAMILY_NAME,
					VNPU_NL_MCGRP_EVENTS);
	int ret;

	if (grp < 0) {
		fprintf(stderr, "vnpu-smi: no \"events\" group: %s\n", nl_geterror(grp));
		return 1;
	}
	ret = nl_socket_add_membership(smi->sock, grp);
	if (ret) {
		fprintf(stderr, "vnpu-smi: cannot listen: %s\n", nl_geterror(ret));
		return 1;
	}
	nl_socket_disable_seq_check(smi->sock);
	nl_socket_modify_cb(smi->sock, NL_CB_VALID, NL_CB_CUSTOM, print_event, smi);
	if (!smi->json)
		fprintf(stderr, "vnpu-smi: listening for events (Ctrl-C to stop)\n");
	while (!stop) {
		ret = nl_recvmsgs_default(smi->sock);
		if (ret < 0 && ret != -NLE_INTR && !stop) {
			fprintf(stderr, "vnpu-smi: %s\n", nl_geterror(ret));
			return 1;
		}
	}
	return 0;
}

static int parse_uint(const char *s, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "clients", no_argument, NULL, 'c' },
		{ "loop", required_argument, NULL, 'l' },
		{ "events", no_argument, NULL, 'e' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct smi smi = { 0 };
	long device = -1, loop = 0;
	bool clients = false, want_events = false;
	struct sigaction sa = { .sa_handler = on_signal };
	int c, ret;

	while ((c = getopt_long(argc, argv, "d:cl:ejh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (parse_uint(optarg, 7, &device)) {
				fprintf(stderr, "vnpu-smi: --device takes 0 to 7\n");
				return 2;
			}
			break;
		case 'c':
			clients = true;
			break;
		case 'l':
			if (parse_uint(optarg, 86400, &loop) || !loop) {
				fprintf(stderr, "vnpu-smi: --loop takes 1 to 86400 seconds\n");
				return 2;
			}
			break;
		case 'e':
			want_events = true;
			break;
		case 'j':
			smi.json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vnpu-smi: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (want_events && (clients || loop)) {
		fprintf(stderr, "vnpu-smi: --events does not combine with --clients or --loop\n");
		return 2;
	}

	smi.sock = nl_socket_alloc();
	if (!smi.sock || genl_connect(smi.sock)) {
		fprintf(stderr, "vnpu-smi: cannot open a generic netlink socket\n");
		return 1;
	}
	smi.family = genl_ctrl_resolve(smi.sock, VNPU_NL_FAMILY_NAME);
	if (smi.family < 0) {
		fprintf(stderr, "vnpu-smi: the netlink family \"vnpu\" is absent: "
			"is vnpu.ko loaded?\n");
		nl_socket_free(smi.sock);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (want_events) {
		ret = events(&smi);
	} else {
		do {
			if (loop && !smi.json && isatty(STDOUT_FILENO))
				printf("\033[H\033[2J");
			ret = show(&smi, clients, device) ? 1 : 0;
			if (ret || !loop)
				break;
			sleep(loop);
		} while (!stop);
	}
	nl_socket_free(smi.sock);
	return ret;
}
