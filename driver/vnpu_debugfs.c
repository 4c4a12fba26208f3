// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: debugfs
 *
 * Under /sys/kernel/debug/dri/<minor>/: ``state`` (device figures),
 * ``bos`` (every BO), ``jobs`` (jobs in flight), ``client_stats`` (open files),
 * and the fault-injection knobs ``inject_hang`` and ``inject_fault`` (that
 * many next jobs hang or fault), ``inject_stall_ms`` (the firmware thread
 * waits that long before it starts each job), ``fail_alloc`` (that many
 * next BO or job allocations fail with -ENOMEM), and ``test_warn`` (the VM harness's own
 * test: writing 1 triggers a kernel WARN). Root only.
 */

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include <drm/drm_debugfs.h>
#include <drm/drm_file.h>
#include <drm/vnpu_drm.h>

#include "vnpu_drv.h"
#include "vnpu_gem.h"
#include "vnpu_job.h"

static struct vnpu_device *vnpu_debugfs_dev(struct seq_file *m)
{
	struct drm_info_node *node = m->private;

	return to_vnpu_device(node->minor->dev);
}

/* The FPU sections of the tiles; the longest with its command's opcodes. */
static void vnpu_debugfs_fpu(struct seq_file *m, struct vnpu_device *vdev)
{
	struct vnpu_fw_fpu_figures fig;

	vnpu_fw_fpu_read(&vdev->fw, &fig);
	seq_printf(m, "fpu_sections: %llu\nfpu_ns: %llu\nfpu_max_ns: %llu\n",
		   fig.sections, fig.total_ns, fig.max_ns);
	seq_printf(m, "fpu_max_opcode: %u\nfpu_max_layer_op: %u\n",
		   fig.max_opcode, fig.max_layer_op);
}

static int vnpu_debugfs_state(struct seq_file *m, void *data)
{
	struct vnpu_device *vdev = vnpu_debugfs_dev(m);
	struct vnpu_counters *s = &vdev->stats;

	seq_printf(m, "device: %d\ntiles: %u\nengine_features: %#x\n",
		   vdev->index, vdev->tiles, vdev->fw.features);
	seq_printf(m, "mem_limit: %llu\nmem_used: %lld\nbos: %d\nclients: %d\n",
		   vdev->mem_limit, (long long)atomic64_read(&vdev->mem_used),
		   atomic_read(&s->bos), atomic_read(&s->clients));
	seq_printf(m, "file_records: %d\njob_records: %d\n",
		   atomic_read(&s->files), atomic_read(&s->jobs));
	seq_printf(m, "jobs_in_flight: %u\njobs_submitted: %lld\n",
		   READ_ONCE(vdev->jobs_in_flight),
		   (long long)atomic64_read(&s->jobs_submitted));
	seq_printf(m, "jobs_completed: %lld\njobs_failed: %lld\n",
		   (long long)atomic64_read(&s->jobs_completed),
		   (long long)atomic64_read(&s->jobs_failed));
	seq_printf(m, "jobs_timedout: %lld\njobs_cancelled: %lld\n",
		   (long long)atomic64_read(&s->jobs_timedout),
		   (long long)atomic64_read(&s->jobs_cancelled));
	seq_printf(m, "busy_ns: %lld\nresets: %lld\n",
		   (long long)atomic64_read(&s->busy_ns),
		   (long long)atomic64_read(&s->resets));
	seq_printf(m, "bytes_uploaded: %lld\nbytes_downloaded: %lld\n",
		   (long long)atomic64_read(&s->bytes_uploaded),
		   (long long)atomic64_read(&s->bytes_downloaded));
	vnpu_debugfs_fpu(m, vdev);
	return 0;
}

static int vnpu_debugfs_bos(struct seq_file *m, void *data)
{
	struct vnpu_device *vdev = vnpu_debugfs_dev(m);
	struct vnpu_bo *bo;

	seq_puts(m, "size charged imported mapped refs\n");
	mutex_lock(&vdev->bo_lock);
	list_for_each_entry(bo, &vdev->bo_list, link)
		seq_printf(m, "%zu %llu %d %d %u\n", bo->base.base.size,
			   bo->charged, !!bo->base.base.import_attach,
			   !!READ_ONCE(bo->vaddr),
			   kref_read(&bo->base.base.refcount));
	mutex_unlock(&vdev->bo_lock);
	return 0;
}

static int vnpu_debugfs_jobs(struct seq_file *m, void *data)
{
	struct vnpu_device *vdev = vnpu_debugfs_dev(m);
	struct vnpu_job *job;

	seq_puts(m, "client job priority commands state command\n");
	spin_lock(&vdev->job_lock);
	list_for_each_entry(job, &vdev->job_list, link)
		seq_printf(m, "%llu %llu %u %u %d %u\n", job->vfile->client_id,
			   job->id, job->priority, job->fw.num_cmds,
			   atomic_read(&job->fw.state),
			   READ_ONCE(job->fw.cur_cmd));
	spin_unlock(&vdev->job_lock);
	return 0;
}

static int vnpu_debugfs_clients(struct seq_file *m, void *data)
{
	struct vnpu_device *vdev = vnpu_debugfs_dev(m);
	struct vnpu_file *vfile;

	seq_puts(m, "client pid comm jobs busy_ns\n");
	mutex_lock(&vdev->file_lock);
	list_for_each_entry(vfile, &vdev->file_list, link)
		seq_printf(m, "%llu %d %s %lld %lld\n", vfile->client_id,
			   vfile->pid, vfile->comm,
			   (long long)atomic64_read(&vfile->jobs_submitted),
			   (long long)atomic64_read(&vfile->busy_ns));
	mutex_unlock(&vdev->file_lock);
	return 0;
}

static const struct drm_info_list vnpu_debugfs_list[] = {
	{ "state", vnpu_debugfs_state, 0 },
	{ "bos", vnpu_debugfs_bos, 0 },
	{ "jobs", vnpu_debugfs_jobs, 0 },
	{ "client_stats", vnpu_debugfs_clients, 0 },
};

/*
 * Test-only: writing 1 triggers a kernel WARN so that the VM harness can
 * prove it catches one. Root-only, in debugfs.
 */
static int vnpu_test_warn_set(void *data, u64 val)
{
	if (val != 1)
		return -EINVAL;
	WARN(1, "vnpu: test WARN requested through debugfs\n");
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(vnpu_test_warn_fops, NULL, vnpu_test_warn_set, "%llu\n");

void vnpu_debugfs_init(struct drm_minor *minor)
{
	struct vnpu_device *vdev = to_vnpu_device(minor->dev);
	struct dentry *root = minor->debugfs_root;

	drm_debugfs_create_files(vnpu_debugfs_list,
				 ARRAY_SIZE(vnpu_debugfs_list), root, minor);
	debugfs_create_atomic_t("inject_hang", 0600, root,
				&vdev->fw.inject_hang);
	debugfs_create_atomic_t("inject_fault", 0600, root,
				&vdev->fw.inject_fault);
	debugfs_create_u32("inject_stall_ms", 0600, root,
			   &vdev->fw.inject_stall_ms);
	debugfs_create_atomic_t("fail_alloc", 0600, root, &vdev->fail_alloc);
	debugfs_create_file_unsafe("test_warn", 0200, root, NULL,
				   &vnpu_test_warn_fops);
}
