#!/usr/bin/python3
# WebKitGTK for WebKitWebDriver with a profile on disk and a low storage quota (MiniBrowser's automation sessions
# keep storage in memory, with WebKit's default 1 GiB per origin): the storage tests fill a site's quota for real.
# Started by WebKitWebDriver as `webkit-profile-shell.py --automation --profile=DIR --origin-quota=BYTES`.
import os
import sys

import gi

gi.require_version('Gtk', '3.0')
gi.require_version('WebKit2', '4.1')
from gi.repository import Gtk, WebKit2  # noqa: E402

options = dict(arg[2:].split('=', 1) for arg in sys.argv[1:] if arg.startswith('--') and '=' in arg)
profile = options['profile']
quota = int(options['origin-quota'])
# WebKit states the quota as a share of the profile's volume
volume = os.statvfs(profile)
ratio = quota / (volume.f_blocks * volume.f_frsize)

manager = WebKit2.WebsiteDataManager(
    base_data_directory=os.path.join(profile, 'data'),
    base_cache_directory=os.path.join(profile, 'cache'),
    origin_storage_ratio=ratio,
    total_storage_ratio=ratio * 4,
)
context = WebKit2.WebContext(website_data_manager=manager)
context.set_automation_allowed(True)


def create_view(_session):
    view = WebKit2.WebView(web_context=context, is_controlled_by_automation=True)
    window = Gtk.Window()
    window.set_default_size(1400, 1000)
    window.add(view)
    window.show_all()
    view.connect('close', lambda v: window.destroy())
    return view


def automation_started(_context, session):
    info = WebKit2.ApplicationInfo()
    info.set_name('MiniBrowser')
    major, minor, micro = WebKit2.get_major_version(), WebKit2.get_minor_version(), WebKit2.get_micro_version()
    info.set_version(major, minor, micro)
    session.set_application_info(info)
    session.connect('create-web-view', create_view)


context.connect('automation-started', automation_started)
Gtk.main()
