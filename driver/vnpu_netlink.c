// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: telemetry over generic netlink
 *
 * The family "vnpu" (uapi/linux/vnpu_netlink.h) reports each device's
 * counters (DEV_GET, do and dump; the FPU sections of its tiles among
 * them) and open files (CLIENT_GET, dump), and multicasts fault, timeout,
 * reset and memory-limit events to the group "events". Requests are
 * checked by strict per-operation policies. Multicasts never wait: a
 * listener that does not read loses events, the driver goes on. Handlers
 * hold the device table lock while they read a device, so a device never
 * goes away under them.
 */

#include <linux/ktime.h>
#include <linux/vnpu_netlink.h>
#include <net/genetlink.h>

#include <drm/drm_file.h>

#include "vnpu_drv.h"

static const struct nla_policy vnpu_nl_dev_get_policy[] = {
	[VNPU_NL_A_DEV_INDEX] = { .type = NLA_U32 },
	[VNPU_NL_A_DEV_NODE] = { .type = NLA_NUL_STRING,
				 .len = VNPU_NL_NODE_MAX },
};

static const struct nla_policy vnpu_nl_client_get_policy[] = {
	[VNPU_NL_A_DEV_INDEX] = { .type = NLA_U32 },
};

static struct genl_family vnpu_nl_family;

static int vnpu_nl_put_dev(struct sk_buff *skb, struct vnpu_device *vdev)
{
	struct vnpu_counters *s = &vdev->stats;
	char node[16];

	snprintf(node, sizeof(node), "renderD%d", vdev->drm.render->index);
	if (nla_put_u32(skb, VNPU_NL_A_DEV_INDEX, vdev->index) ||
	    nla_put_string(skb, VNPU_NL_A_DEV_NODE, node) ||
	    nla_put_u32(skb, VNPU_NL_A_DEV_TILES, vdev->tiles) ||
	    nla_put_u64_64bit(skb, VNPU_NL_A_DEV_BUSY_NS,
			      vnpu_device_busy_ns(vdev), VNPU_NL_A_PAD) ||
	    nla_put_u32(skb, VNPU_NL_A_DEV_UTIL, vnpu_device_utilization(vdev)) ||
	    nla_put_u64_64bit(skb, VNPU_NL_A_DEV_JOBS_SUBMITTED,
			      atomic64_read(&s->jobs_submitted), VNPU_NL_A_PAD) ||
	    nla_put_u64_64bit(skb, VNPU_NL_A_DEV_JOBS_COMPLETED,
			      atomic64_read(&s->jobs_completed), VNPU_NL_A_PAD) ||
	    nla_put_u64_64bit(skb, VNPU_NL_A_DEV_JOBS_FAILED,
			      atomic64_read(&s->jobs_failed), VNPU_NL_A_PAD) ||
	    nla_put_u64_64bit(skb, VNPU_NL_A_DEV_JOBS_TIMEDOUT,
			      atomic64_read(&s->jobs_timedout), VNPU_NL_A_PAD) ||
	    nla_put_u64_64bit(skb, VNPU_NL_A_DEV_JOBS_CANCELLED,
			      atomic64_read(&s->jobs_cancelled), VNPU_NL_A_PAD) ||
	    nla_put_u64_64bit(skb, VNPU_NL_A_DEV_RESETS,
			      atomic64_read(&s->resets), VNPU_NL_A_PAD) ||
	    nla_put_u64_64bit(skb, VNPU_NL_A_DEV_MEM_USED,
			      atomic64_read(&vdev->mem_used), VNPU_NL_A_PAD) ||
	    nla_put_u64_64bit(skb, VNPU_NL_A_DEV_MEM_LIMIT, vdev->mem_limit,
			      VNPU_NL_A_PAD) ||
	    nla_put_u32(skb, VNPU_NL_A_DEV_BOS, atomic_read(&s->bos)) ||
	    nla_put_u64_64bit(skb, VNPU_NL_A_DEV_BYTES_UPLOADED,
			      atomic64_read(&s->bytes_uploaded), VNPU_NL_A_PAD) ||
	    nla_put_u64_64bit(skb, VNPU_NL_A_DEV_BYTES_DOWNLOADED,
			      atomic64_read(&s->bytes_downloaded), VNPU_NL_A_PAD) ||
	    nla_put_u32(skb, VNPU_NL_A_DEV_CLIENTS, atomic_read(&s->clients)))
		return -EMSGSIZE;
	return 0;
}

static int vnpu_nl_put_fpu(struct sk_buff *skb, struct vnpu_device *vdev)
{
	struct vnpu_fw_fpu_figures fig;

	vnpu_fw_fpu_read(&vdev->fw, &fig);
	if (nla_put_u64_64bit(skb, VNPU_NL_A_DEV_FPU_SECTIONS, fig.sections,
			      VNPU_NL_A_PAD) ||
	    nla_put_u64_64bit(skb, VNPU_NL_A_DEV_FPU_NS, fig.total_ns,
			      VNPU_NL_A_PAD) ||
	    nla_put_u64_64bit(skb, VNPU_NL_A_DEV_FPU_MAX_NS, fig.max_ns,
			      VNPU_NL_A_PAD) ||
	    nla_put_u32(skb, VNPU_NL_A_DEV_FPU_MAX_OPCODE, fig.max_opcode) ||
	    nla_put_u32(skb, VNPU_NL_A_DEV_FPU_MAX_LAYER_OP, fig.max_layer_op))
		return -EMSGSIZE;
	return 0;
}

static int vnpu_nl_fill_dev(struct sk_buff *skb, struct vnpu_device *vdev,
			    u32 portid, u32 seq, int flags)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &vnpu_nl_family, flags,
			  VNPU_NL_CMD_DEV_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (vnpu_nl_put_dev(skb, vdev) || vnpu_nl_put_fpu(skb, vdev)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

static struct vnpu_device *vnpu_nl_find_dev(struct genl_info *info)
{
	struct vnpu_device *vdev;
	char node[16];
	u32 i;

	if (info->attrs[VNPU_NL_A_DEV_INDEX])
		return vnpu_device_lookup(nla_get_u32(info->attrs[VNPU_NL_A_DEV_INDEX]));

	for (i = 0; i < VNPU_MAX_DEVICES; i++) {
		vdev = vnpu_device_lookup(i);
		if (!vdev)
			continue;
		snprintf(node, sizeof(node), "renderD%d", vdev->drm.render->index);
		if (!nla_strcmp(info->attrs[VNPU_NL_A_DEV_NODE], node))
			return vdev;
	}
	return NULL;
}

static int vnpu_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct vnpu_device *vdev;
	struct sk_buff *msg;
	int ret;

	if (!info->attrs[VNPU_NL_A_DEV_INDEX] && !info->attrs[VNPU_NL_A_DEV_NODE]) {
		NL_SET_ERR_MSG(info->extack, "device index or node required");
		return -EINVAL;
	}
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;

	vnpu_device_table_lock();
	vdev = vnpu_nl_find_dev(info);
	if (!vdev) {
		vnpu_device_table_unlock();
		nlmsg_free(msg);
		NL_SET_ERR_MSG(info->extack, "no such vnpu device");
		return -ENODEV;
	}

	ret = vnpu_nl_fill_dev(msg, vdev, info->snd_portid, info->snd_seq, 0);
	vnpu_device_table_unlock();
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

/* cb->args[0]: the next device index to dump. */
static int vnpu_nl_dev_get_dumpit(struct sk_buff *skb,
				  struct netlink_callback *cb)
{
	struct vnpu_device *vdev;
	unsigned long i;

	vnpu_device_table_lock();
	for (i = cb->args[0]; i < VNPU_MAX_DEVICES; i++) {
		vdev = vnpu_device_lookup(i);
		if (!vdev)
			continue;
		if (vnpu_nl_fill_dev(skb, vdev, NETLINK_CB(cb->skb).portid,
				     cb->nlh->nlmsg_seq, NLM_F_MULTI))
			break;
	}
	vnpu_device_table_unlock();
	cb->args[0] = i;
	return skb->len;
}

static int vnpu_nl_fill_client(struct sk_buff *skb, struct vnpu_file *vfile,
			       u32 portid, u32 seq)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &vnpu_nl_family, NLM_F_MULTI,
			  VNPU_NL_CMD_CLIENT_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, VNPU_NL_A_DEV_INDEX, vfile->vdev->index) ||
	    nla_put_u64_64bit(skb, VNPU_NL_A_CLIENT_ID, vfile->client_id,
			      VNPU_NL_A_PAD) ||
	    nla_put_u32(skb, VNPU_NL_A_CLIENT_PID, vfile->pid) ||
	    nla_put_string(skb, VNPU_NL_A_CLIENT_COMM, vfile->comm) ||
	    nla_put_u64_64bit(skb, VNPU_NL_A_CLIENT_JOBS,
			      atomic64_read(&vfile->jobs_submitted), VNPU_NL_A_PAD) ||
	    nla_put_u64_64bit(skb, VNPU_NL_A_CLIENT_BUSY_NS,
			      atomic64_read(&vfile->busy_ns), VNPU_NL_A_PAD)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* Dump the clients of @vdev from position *@pos; false when @skb is full. */
static bool vnpu_nl_dump_clients(struct sk_buff *skb,
				 struct netlink_callback *cb,
				 struct vnpu_device *vdev, long *pos)
{
	struct vnpu_file *vfile;
	long n = 0;
	bool done = true;

	mutex_lock(&vdev->file_lock);
	list_for_each_entry(vfile, &vdev->file_list, link) {
		if (n++ < *pos)
			continue;
		if (vnpu_nl_fill_client(skb, vfile, NETLINK_CB(cb->skb).portid,
					cb->nlh->nlmsg_seq)) {
			done = false;
			break;
		}
		(*pos)++;
	}
	mutex_unlock(&vdev->file_lock);
	return done;
}

/* cb->args[0]: device index; cb->args[1]: next client of that device. */
static int vnpu_nl_client_get_dumpit(struct sk_buff *skb,
				     struct netlink_callback *cb)
{
	const struct genl_dumpit_info *info = genl_dumpit_info(cb);
	struct nlattr *filter = info->attrs[VNPU_NL_A_DEV_INDEX];
	struct vnpu_device *vdev;
	unsigned long i;

	vnpu_device_table_lock();
	for (i = cb->args[0]; i < VNPU_MAX_DEVICES; i++, cb->args[1] = 0) {
		if (filter && nla_get_u32(filter) != i)
			continue;
		vdev = vnpu_device_lookup(i);
		if (vdev && !vnpu_nl_dump_clients(skb, cb, vdev, &cb->args[1]))
			break;
	}
	vnpu_device_table_unlock();
	cb->args[0] = i;
	return skb->len;
}

static const struct genl_ops vnpu_nl_ops[] = {
	{
		.cmd = VNPU_NL_CMD_DEV_GET,
		.doit = vnpu_nl_dev_get_doit,
		.dumpit = vnpu_nl_dev_get_dumpit,
		.policy = vnpu_nl_dev_get_policy,
		.maxattr = ARRAY_SIZE(vnpu_nl_dev_get_policy) - 1,
	},
	{
		.cmd = VNPU_NL_CMD_CLIENT_GET,
		.dumpit = vnpu_nl_client_get_dumpit,
		.policy = vnpu_nl_client_get_policy,
		.maxattr = ARRAY_SIZE(vnpu_nl_client_get_policy) - 1,
	},
};

static const struct genl_multicast_group vnpu_nl_mcgrps[] = {
	{ .name = VNPU_NL_MCGRP_EVENTS },
};

static struct genl_family vnpu_nl_family __ro_after_init = {
	.name = VNPU_NL_FAMILY_NAME,
	.version = VNPU_NL_FAMILY_VERSION,
	.module = THIS_MODULE,
	.ops = vnpu_nl_ops,
	.n_ops = ARRAY_SIZE(vnpu_nl_ops),
	.resv_start_op = VNPU_NL_CMD_DEV_GET,
	.mcgrps = vnpu_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(vnpu_nl_mcgrps),
};

static bool vnpu_nl_registered;

/**
 * vnpu_nl_event() - multicast an event to the "events" group
 * @vdev: the device
 * @cmd: %VNPU_NL_CMD_JOB_FAULT, _JOB_TIMEOUT, _DEVICE_RESET or _MEMORY_LIMIT
 * @vfile: the client concerned, or NULL
 * @job_id: the job concerned, or 0
 * @reason: a short text
 *
 * Never sleeps on listeners; may be called from any process context.
 */
void vnpu_nl_event(struct vnpu_device *vdev, u8 cmd, struct vnpu_file *vfile,
		   u64 job_id, const char *reason)
{
	struct sk_buff *msg;
	void *hdr;

	if (!READ_ONCE(vnpu_nl_registered) ||
	    !genl_has_listeners(&vnpu_nl_family, &init_net, 0))
		return;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &vnpu_nl_family, 0, cmd);
	if (!hdr)
		goto err_free;
	if (nla_put_u32(msg, VNPU_NL_A_DEV_INDEX, vdev->index) ||
	    nla_put_u64_64bit(msg, VNPU_NL_A_JOB_ID, job_id, VNPU_NL_A_PAD) ||
	    nla_put_string(msg, VNPU_NL_A_REASON, reason))
		goto err_free;
	if (vfile &&
	    (nla_put_u64_64bit(msg, VNPU_NL_A_CLIENT_ID, vfile->client_id,
			       VNPU_NL_A_PAD) ||
	     nla_put_u32(msg, VNPU_NL_A_CLIENT_PID, vfile->pid)))
		goto err_free;
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&vnpu_nl_family, msg, 0, 0, GFP_KERNEL);
	return;

err_free:
	nlmsg_free(msg);
}

int vnpu_nl_init(void)
{
	int ret = genl_register_family(&vnpu_nl_family);

	if (!ret)
		WRITE_ONCE(vnpu_nl_registered, true);
	return ret;
}

void vnpu_nl_fini(void)
{
	WRITE_ONCE(vnpu_nl_registered, false);
	genl_unregister_family(&vnpu_nl_family);
}
