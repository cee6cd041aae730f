import './base.css';
import './definitions.css';
import './usagechart.css';
